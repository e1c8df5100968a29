//! The kernel's parameter list, defined once: the PTX back end declares it, rc's runtimes
//! check their argument blocks against it.

use crate::geometry::Dims;
use crate::scalar::ScalarType;

/// One parameter of a stencil's `.entry`, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelParam {
    /// Input field `field`'s device address (`.u64`).
    Input { field: u32 },
    /// Output field `field`'s device address (`.u64`).
    Output { field: u32 },
    /// The input's length in elements, every field's (`.u64`).
    Len,
    /// The output's length in elements, every output field's (`.u64`).
    OutputLen,
    /// A 2D or 3D grid's length along dimension `axis` (0 is x), of the input or the output
    /// (`.u64`). 1D stencils have only `Len` and `OutputLen`.
    Extent { axis: u32, output: bool },
    /// 2D and 3D: the first output row (plane in 3D) the launch computes along the outermost
    /// axis; the output's extent along that axis is where it stops. 0 and the output's extent
    /// for the whole grid; a sub-grid of rows (a band of a grid split over GPUs, computing only
    /// the rows still exact) reads the whole input under the boundary rule at its edges and
    /// stores only its own rows ([`crate::launch_map`]).
    FirstRow,
    /// 2D only: how many rows below its own a tile prefetches into L2 (`.u64`; 0: none), which
    /// the launch computes from the GPU's resident blocks ([`crate::prefetch::rows_ahead`]).
    /// Kernels that do not prefetch ([`crate::Pattern::prefetches`]) take it and ignore it, so
    /// every 2D kernel has one parameter list.
    PrefetchRows,
    /// Scalar `index` of the stencil's parameters, by value. An array parameter `[T; N]` is `N`
    /// consecutive scalars, one `.param` each, as a scalar parameter is ([`crate::Param`]): the
    /// kernel reads each element like any parameter and a launch passes nothing but scalars.
    Value { index: u32, ty: ScalarType },
}

impl KernelParam {
    /// The bytes of parameter space a kernel may take: PTX ISA 7.0 (which rc prints) allows
    /// 4096.
    pub const MAX_SPACE: u32 = 4096;

    /// The bytes `list` takes in the parameter space, each parameter aligned to its size.
    pub fn space(list: &[KernelParam]) -> u32 {
        list.iter().fold(0, |end, p| end.next_multiple_of(p.bytes()) + p.bytes())
    }

    /// The parameter list of a stencil of `dims` dimensions with `fields` input fields and
    /// `outputs` output fields whose parameters have types `params`: the buffers (every input
    /// field's, then every output field's), their lengths, in 2D and 3D the input's and then the
    /// output's shape (outermost first) and the first output row, in 2D the prefetch distance,
    /// then the parameters.
    pub fn list(dims: Dims, fields: u32, outputs: u32, params: &[ScalarType]) -> Vec<KernelParam> {
        let inputs = (0..fields).map(|field| KernelParam::Input { field });
        let outputs = (0..outputs).map(|field| KernelParam::Output { field });
        let leading = inputs.chain(outputs).chain([KernelParam::Len, KernelParam::OutputLen]);
        let axes = |output| (0..dims.count() as u32).rev().map(move |axis| KernelParam::Extent { axis, output });
        let shape: Vec<KernelParam> = match dims {
            Dims::One => Vec::new(),
            Dims::Two => {
                axes(false).chain(axes(true)).chain([KernelParam::FirstRow, KernelParam::PrefetchRows]).collect()
            }
            Dims::Three => axes(false).chain(axes(true)).chain([KernelParam::FirstRow]).collect(),
        };
        let values = params.iter().enumerate().map(|(i, &ty)| KernelParam::Value { index: i as u32, ty });
        leading.chain(shape).chain(values).collect()
    }

    /// The name's suffix after the entry's name (`rc_box7_input`, `rc_step_input1`,
    /// `rc_box7_output`, `rc_pair_output1`, `rc_box7_p0`): input field 0 is `input` and output
    /// field 0 `output`, as in a kernel of one input and one output.
    pub fn suffix(self) -> String {
        match self {
            KernelParam::Input { field: 0 } => "input".into(),
            KernelParam::Input { field } => format!("input{field}"),
            KernelParam::Output { field: 0 } => "output".into(),
            KernelParam::Output { field } => format!("output{field}"),
            KernelParam::Len => "n".into(),
            KernelParam::OutputLen => "n_out".into(),
            KernelParam::Extent { axis, output } => {
                format!("{}_{}", if output { "out" } else { "in" }, ["x", "y", "z"][axis as usize])
            }
            KernelParam::FirstRow => "first_row".into(),
            KernelParam::PrefetchRows => "prefetch_rows".into(),
            KernelParam::Value { index, .. } => format!("p{index}"),
        }
    }

    /// The PTX type it is declared with.
    pub fn ptx_type(self) -> &'static str {
        match self {
            KernelParam::Value { ty, .. } => ty.memory_ptx(),
            _ => "u64",
        }
    }

    /// Bytes a launch passes for it.
    pub fn bytes(self) -> u32 {
        match self {
            KernelParam::Value { ty, .. } => ty.bytes(),
            _ => 8,
        }
    }
}
