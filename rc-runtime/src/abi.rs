//! The kernel ABI: what a stencil's `.entry` takes, and the argument block a launch passes.
//!
//! The parameter list is rc-core's [`KernelParam::list`] (the PTX back end declares it): the
//! device pointers of every input field and of every output field, their lengths, in 2D and 3D the input's
//! and then the output's extent along each dimension (outermost first), in 2D the rows a tile
//! prefetches ahead, then each stencil parameter by value (an array `[T; N]` as `N` consecutive
//! scalars).
//! Both the check and the argument block walk that list, so the order is defined once, in
//! rc-core.
//!
//! `cuLaunchKernel` copies each argument with the size the *kernel* declares, so a kernel that
//! declares different sizes would silently read garbage. The entry's parameter list is therefore
//! read from the PTX once, when the kernel is loaded, and every launch checks its arguments
//! against it.

use std::os::raw::c_void;

use rc_core::abi::KernelParam;
use rc_core::{Dims, Extent, Scalar, ScalarType};

use crate::error::Error;

/// One `.param` of a PTX entry: its type as written (e.g. `.u64`) and its size in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PtxParam {
    pub ty: String,
    pub bytes: u32,
}

/// The parameters of `.entry <entry>` in `ptx`, or a description of why they cannot be read.
pub(crate) fn entry_params(ptx: &str, entry: &str) -> Result<Vec<PtxParam>, String> {
    let text = strip_comments(ptx);
    let mut rest = text.as_str();
    let after_name = loop {
        let Some(at) = rest.find(".entry") else {
            return Err(format!("no `.entry {entry}` in the PTX"));
        };
        rest = &rest[at + ".entry".len()..];
        let name_start = rest.trim_start();
        let name_len = name_start.find(|c: char| !is_ident_char(c)).unwrap_or(name_start.len());
        if &name_start[..name_len] == entry {
            break &name_start[name_len..];
        }
    };
    let after_name = after_name.trim_start();
    let Some(list) = after_name.strip_prefix('(') else {
        return Ok(Vec::new()); // `.entry name` with no parameter list
    };
    let Some(close) = list.find(')') else {
        return Err(format!("the parameter list of `.entry {entry}` has no closing `)`"));
    };
    let list = list[..close].trim();
    if list.is_empty() {
        return Ok(Vec::new());
    }
    list.split(',').map(|decl| parse_param(decl.trim())).collect()
}

/// `.param [.align N] [.ptr ...] .TYPE name[dims]` → type and size.
fn parse_param(decl: &str) -> Result<PtxParam, String> {
    let mut tokens = decl.split_whitespace();
    if tokens.next() != Some(".param") {
        return Err(format!("expected a `.param` declaration, got `{decl}`"));
    }
    let mut ty = None;
    let mut name = "";
    for token in tokens {
        if ty.is_none() {
            if let Some(bits) = type_bits(token) {
                ty = Some((token, bits));
                continue;
            }
        } else {
            name = token;
        }
    }
    let Some((ty, bits)) = ty else {
        return Err(format!("expected a type in `{decl}`"));
    };
    // An array parameter, `.b8 name[16]`: size times each dimension.
    let mut bytes = bits / 8;
    for dim in name.split('[').skip(1) {
        let count: u32 =
            dim.trim_end_matches(']').trim().parse().map_err(|_| format!("cannot read the array size in `{decl}`"))?;
        bytes *= count;
    }
    Ok(PtxParam { ty: ty.to_owned(), bytes })
}

fn type_bits(token: &str) -> Option<u32> {
    let digits = token.strip_prefix('.')?.strip_prefix(['u', 's', 'b', 'f'])?;
    match digits {
        "8" | "16" | "32" | "64" => digits.parse().ok(),
        _ => None,
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%')
}

/// The PTX with `//` and `/* */` comments removed (outside string literals, which only `.file`
/// directives have).
fn strip_comments(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut chars = ptx.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            in_string = c != '"';
            out.push(c);
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == '/' && chars.peek() == Some(&'/') {
            for c in chars.by_ref() {
                if c == '\n' {
                    out.push('\n');
                    break;
                }
            }
        } else if c == '/' && chars.peek() == Some(&'*') {
            chars.next();
            let mut previous = ' ';
            for c in chars.by_ref() {
                if previous == '*' && c == '/' {
                    break;
                }
                previous = c;
            }
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// The parameter list a kernel of `dims` dimensions with `fields` input fields and `outputs`
/// output fields for `scalars` must declare ([`KernelParam::list`], which the PTX back end
/// declares), for messages: `.u64 input, .u64 output, .u64 n, .u64 n_out, .f32 p0` in 1D with
/// one field of each, `.u64 input1` after `input` for a second input, `.u64 output1` after
/// `output` for a second output, with `.u64 in_y, .u64 in_x, .u64 out_y, .u64 out_x, .u64
/// prefetch_rows` after `n_out` in 2D.
pub(crate) fn expected_signature(dims: Dims, fields: u32, outputs: u32, scalars: &[ScalarType]) -> String {
    let list = KernelParam::list(dims, fields, outputs, scalars)
        .into_iter()
        .map(|p| format!(".{} {}", p.ptx_type(), p.suffix()));
    list.collect::<Vec<_>>().join(", ")
}

/// What the PTX declares, for messages.
pub(crate) fn describe_params(params: &[PtxParam]) -> String {
    let list = params.iter().map(|p| format!("{} ({} bytes)", p.ty, p.bytes)).collect::<Vec<_>>().join(", ");
    format!("{} parameters: ({list})", params.len())
}

/// Whether a kernel declaring `declared` takes the arguments of a `dims`-dimensional stencil
/// with `fields` input fields, `outputs` output fields and parameters `scalars`: same count,
/// same sizes. Sizes are what `cuLaunchKernel` goes by; the types are rc-core's to keep
/// consistent.
pub(crate) fn matches(declared: &[PtxParam], dims: Dims, fields: u32, outputs: u32, scalars: &[ScalarType]) -> bool {
    let expected = KernelParam::list(dims, fields, outputs, scalars);
    declared.iter().map(|p| p.bytes).eq(expected.into_iter().map(KernelParam::bytes))
}

/// Refuses a kernel whose `.entry` does not declare the parameters a launch of a
/// `dims`-dimensional stencil with `fields` input fields, `outputs` output fields and
/// parameters `scalars` passes ([`Error::KernelAbi`]).
// One argument per part of the signature, besides the names for the message.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check(
    stencil: &'static str,
    entry: &'static str,
    declared: &[PtxParam],
    dims: Dims,
    fields: u32,
    outputs: u32,
    scalars: &[ScalarType],
) -> Result<(), Error> {
    if matches(declared, dims, fields, outputs, scalars) {
        return Ok(());
    }
    let expected = expected_signature(dims, fields, outputs, scalars);
    Err(Error::KernelAbi { stencil, entry, expected, got: describe_params(declared) })
}

/// One argument's bytes, 8-byte aligned like the largest argument.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot([u8; 8]);

/// The argument block of one launch. `cuLaunchKernel` takes an array of pointers, one per
/// parameter, each to that parameter's value; the driver copies the bytes before it returns.
#[derive(Debug)]
pub(crate) struct KernelArgs {
    slots: Vec<Slot>,
}

/// A stencil parameter's slot: 8-byte values fill it, 4-byte values sit in its first bytes, where
/// the driver reads 4 bytes.
fn scalar_slot(scalar: Scalar) -> Slot {
    match scalar.ty.bytes() {
        8 => Slot(scalar.bits.to_ne_bytes()),
        _ => {
            let mut slot = [0; 8];
            slot[..4].copy_from_slice(&(scalar.bits as u32).to_ne_bytes());
            Slot(slot)
        }
    }
}

/// What one launch passes, by meaning; [`KernelArgs::new`] puts it in the kernel's order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LaunchValues<'a> {
    /// The buffers' device addresses: one input per input field, one output per output field.
    pub inputs: &'a [u64],
    pub outputs: &'a [u64],
    /// The buffers' lengths in elements.
    pub n: u64,
    pub n_out: u64,
    /// The grids' shapes (read in 2D and 3D only; 1D kernels take the lengths alone).
    pub input_shape: Extent,
    pub output_shape: Extent,
    /// 2D and 3D: the first output row the launch computes ([`KernelParam::FirstRow`]; the
    /// output shape's outermost length is where its rows end).
    pub first_row: u64,
    /// 2D: rows below its own a tile prefetches ([`KernelParam::PrefetchRows`]; 0: none).
    pub prefetch_rows: u64,
    pub scalars: &'a [Scalar],
}

impl KernelArgs {
    /// The argument block of a `dims`-dimensional stencil's kernel: one slot per
    /// [`KernelParam::list`] entry, in its order.
    pub(crate) fn new(dims: Dims, values: &LaunchValues<'_>) -> KernelArgs {
        let types: Vec<ScalarType> = values.scalars.iter().map(|s| s.ty).collect();
        let wide = |v: u64| Slot(v.to_ne_bytes());
        let slots = KernelParam::list(dims, values.inputs.len() as u32, values.outputs.len() as u32, &types)
            .into_iter()
            .map(|param| match param {
                // In bounds: the list has one `Input` per entry of `inputs`, one `Output` per
                // entry of `outputs`.
                KernelParam::Input { field } => wide(values.inputs[field as usize]),
                KernelParam::Output { field } => wide(values.outputs[field as usize]),
                KernelParam::Len => wide(values.n),
                KernelParam::OutputLen => wide(values.n_out),
                KernelParam::Extent { axis, output } => {
                    let shape = if output { values.output_shape } else { values.input_shape };
                    wide(shape.along(axis as usize) as u64)
                }
                KernelParam::FirstRow => wide(values.first_row),
                KernelParam::PrefetchRows => wide(values.prefetch_rows),
                // In bounds: the list has one `Value` per entry of `types`, which is `scalars`'.
                KernelParam::Value { index, .. } => scalar_slot(values.scalars[index as usize]),
            })
            .collect();
        KernelArgs { slots }
    }

    /// The pointer array for `cuLaunchKernel`. Valid while `self` is neither moved nor dropped.
    pub(crate) fn pointers(&mut self) -> Vec<*mut c_void> {
        self.slots.iter_mut().map(|slot| slot.0.as_mut_ptr().cast::<c_void>()).collect()
    }

    #[cfg(test)]
    pub(crate) fn bytes(&self, i: usize) -> [u8; 8] {
        self.slots[i].0
    }

    /// Each slot's 8 bytes as a native-endian `u64`: the `.u64` parameters' values.
    #[cfg(test)]
    pub(crate) fn values(&self) -> Vec<u64> {
        self.slots.iter().map(|slot| u64::from_ne_bytes(slot.0)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.file 1 "http://example//x.rs"

// .entry decoy(.param .u32 x)
.visible .entry rc_box3_helper(.param .u64 a)
{ ret; }

.visible .entry rc_box3(
    .param .u64 rc_box3_input,   // device pointer
    .param .u64 rc_box3_output,
    .param .u64 rc_box3_n, /* input length */
    .param .u64 rc_box3_n_out,
    .param .f32 rc_box3_param0,
    .param .align 8 .b8 rc_box3_param1[16]
)
{
    ret;
}
"#;

    #[test]
    fn reads_the_named_entry_with_comments_and_arrays() {
        let params = entry_params(PTX, "rc_box3").expect("parses");
        let got: Vec<(&str, u32)> = params.iter().map(|p| (p.ty.as_str(), p.bytes)).collect();
        assert_eq!(got, [(".u64", 8), (".u64", 8), (".u64", 8), (".u64", 8), (".f32", 4), (".b8", 16)]);
        let helper = entry_params(PTX, "rc_box3_helper").expect("parses");
        assert_eq!(helper, [PtxParam { ty: ".u64".into(), bytes: 8 }]);
    }

    #[test]
    fn missing_entry_says_which() {
        let err = entry_params(PTX, "rc_nope").expect_err("no such entry");
        assert_eq!(err, "no `.entry rc_nope` in the PTX");
        assert_eq!(entry_params(".entry k()", "k"), Ok(vec![]));
        assert_eq!(entry_params(".entry k\n{ ret; }", "k"), Ok(vec![]));
        assert!(entry_params(".entry k(.param .u64 a", "k").unwrap_err().contains("no closing"));
        assert!(entry_params(".entry k(.reg .u64 a)", "k").unwrap_err().contains("expected a `.param`"));
    }

    #[test]
    fn matching_goes_by_count_and_size() {
        let p = |ty: &str, bytes| PtxParam { ty: ty.into(), bytes };
        let four = vec![p(".u64", 8); 4];
        assert!(matches(&four, Dims::One, 1, 1, &[]));
        let mut with_f32 = four.clone();
        with_f32.push(p(".f32", 4));
        assert!(matches(&with_f32, Dims::One, 1, 1, &[ScalarType::F32]));
        assert!(matches(&with_f32, Dims::One, 1, 1, &[ScalarType::U32]));
        assert!(!matches(&with_f32, Dims::One, 1, 1, &[ScalarType::F64]));
        assert!(!matches(&with_f32, Dims::One, 1, 1, &[]));
        assert!(!matches(&four, Dims::One, 1, 1, &[ScalarType::F32]));
        assert_eq!(
            expected_signature(Dims::One, 1, 1, &[ScalarType::F32, ScalarType::F64]),
            ".u64 input, .u64 output, .u64 n, .u64 n_out, .f32 p0, .f64 p1"
        );
        // A second field's pointer comes after the first's: 5 pointers and lengths, then p0.
        let mut two_fields = vec![p(".u64", 8); 5];
        two_fields.push(p(".f32", 4));
        assert!(matches(&two_fields, Dims::One, 2, 1, &[ScalarType::F32]));
        assert!(!matches(&two_fields, Dims::One, 1, 1, &[ScalarType::F32]));
        assert!(!matches(&with_f32, Dims::One, 2, 1, &[ScalarType::F32]));
        assert_eq!(
            expected_signature(Dims::One, 2, 1, &[ScalarType::F32]),
            ".u64 input, .u64 input1, .u64 output, .u64 n, .u64 n_out, .f32 p0"
        );
        // A second output field's pointer comes after the first output's, before the lengths.
        assert!(matches(&two_fields, Dims::One, 1, 2, &[ScalarType::F32]));
        assert!(!matches(&with_f32, Dims::One, 1, 2, &[ScalarType::F32]));
        assert_eq!(
            expected_signature(Dims::One, 2, 2, &[]),
            ".u64 input, .u64 input1, .u64 output, .u64 output1, .u64 n, .u64 n_out"
        );
        assert_eq!(describe_params(&with_f32[3..]), "2 parameters: (.u64 (8 bytes), .f32 (4 bytes))");
    }

    #[test]
    fn arguments_hold_exact_bits() {
        let scalars = [Scalar::f32(-0.0), Scalar::f64(1.5), Scalar::i32(-2), Scalar::u32(7)];
        let values = LaunchValues {
            inputs: &[0x1000],
            outputs: &[0x2000],
            n: 10,
            n_out: 8,
            input_shape: Extent::x(10),
            output_shape: Extent::x(8),
            first_row: 0,
            prefetch_rows: 0,
            scalars: &scalars,
        };
        let mut args = KernelArgs::new(Dims::One, &values);
        assert_eq!(args.bytes(0), 0x1000u64.to_ne_bytes());
        assert_eq!(args.bytes(3), 8u64.to_ne_bytes());
        assert_eq!(args.bytes(4)[..4], (-0.0f32).to_bits().to_ne_bytes());
        assert_eq!(args.bytes(5), 1.5f64.to_bits().to_ne_bytes());
        assert_eq!(args.bytes(6)[..4], (-2i32).to_ne_bytes());
        assert_eq!(args.bytes(7)[..4], 7u32.to_ne_bytes());
        let pointers = args.pointers();
        assert_eq!(pointers.len(), 8);
        assert!(pointers.iter().all(|p| (*p as usize) % 8 == 0));
        // A second input field's address follows the first's, before the output's.
        let args = KernelArgs::new(Dims::One, &LaunchValues { inputs: &[0x1000, 0x3000], ..values });
        assert_eq!(args.values()[..5], [0x1000, 0x3000, 0x2000, 10, 8]);
        assert_eq!(args.bytes(5)[..4], (-0.0f32).to_bits().to_ne_bytes());
        // A second output field's address follows the first output's, before the lengths.
        let args = KernelArgs::new(Dims::One, &LaunchValues { outputs: &[0x2000, 0x4000], ..values });
        assert_eq!(args.values()[..5], [0x1000, 0x2000, 0x4000, 10, 8]);
        assert_eq!(args.bytes(5)[..4], (-0.0f32).to_bits().to_ne_bytes());
    }

    /// A 2D kernel's list as the PTX back end declares it (`KernelParam::list(Dims::Two, ..)`).
    fn ptx_2d(params: &str) -> String {
        format!(
            ".visible .entry k(.param .u64 k_input, .param .u64 k_output, .param .u64 k_n, .param .u64 k_n_out, \
             .param .u64 k_in_y, .param .u64 k_in_x, .param .u64 k_out_y, .param .u64 k_out_x, .param .u64 k_first_row, .param .u64 k_prefetch_rows{params})\n{{ ret; }}"
        )
    }

    #[test]
    fn a_2d_kernel_takes_both_extents_after_the_lengths() {
        let declared = entry_params(&ptx_2d(", .param .f32 k_p0"), "k").expect("parses");
        assert_eq!(declared.len(), 11);
        assert!(check("blur", "k", &declared, Dims::Two, 1, 1, &[ScalarType::F32]).is_ok());
        // The same list is not a 1D kernel's, nor a 3D one's.
        assert!(!matches(&declared, Dims::One, 1, 1, &[ScalarType::F32]));
        assert!(!matches(&declared, Dims::Three, 1, 1, &[ScalarType::F32]));

        // A 2D kernel declared without its extents (as a 1D one) is refused, saying what a 2D
        // launch passes.
        let one_d =
            entry_params(".entry k(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d, .param .f32 e)", "k")
                .expect("parses");
        let err = check("blur", "k", &one_d, Dims::Two, 1, 1, &[ScalarType::F32]).expect_err("no extents");
        assert_eq!(
            err.to_string(),
            "kernel ABI mismatch for stencil `blur`: expected `.entry k` taking (.u64 input, .u64 output, .u64 n, \
             .u64 n_out, .u64 in_y, .u64 in_x, .u64 out_y, .u64 out_x, .u64 first_row, .u64 prefetch_rows, .f32 p0), got 5 parameters: (.u64 (8 bytes), \
             .u64 (8 bytes), .u64 (8 bytes), .u64 (8 bytes), .f32 (4 bytes))"
        );
        assert_eq!(
            expected_signature(Dims::Three, 1, 1, &[]),
            ".u64 input, .u64 output, .u64 n, .u64 n_out, .u64 in_z, .u64 in_y, .u64 in_x, .u64 out_z, .u64 out_y, \
             .u64 out_x, .u64 first_row"
        );
    }

    #[test]
    fn a_2d_argument_block_has_the_extents_outermost_first_input_then_output() {
        let scalars = [Scalar::f32(0.25)];
        let values = LaunchValues {
            inputs: &[0x1000],
            outputs: &[0x2000],
            n: 6 * 40,
            n_out: 4 * 38,
            input_shape: Extent::yx(6, 40),
            output_shape: Extent::yx(4, 38),
            first_row: 3,
            prefetch_rows: 16,
            scalars: &scalars,
        };
        let args = KernelArgs::new(Dims::Two, &values);
        assert_eq!(args.values()[..10], [0x1000, 0x2000, 240, 152, 6, 40, 4, 38, 3, 16]);
        assert_eq!(args.bytes(10)[..4], 0.25f32.to_bits().to_ne_bytes());
        let declared = entry_params(&ptx_2d(", .param .f32 k_p0"), "k").expect("parses");
        assert_eq!(args.slots.len(), declared.len());
    }
}
