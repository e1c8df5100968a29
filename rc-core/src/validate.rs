//! Every refusal of what a user declares, checked and phrased here once: the pattern's arguments,
//! the distribution, the signature's types and parameters, taps, and the registers the compiled
//! kernel needs ([`crate::plan`] checks how the arguments go together). One function per declared value,
//! so that a front end (the macro) can check each on its own, report every refusal at once and put
//! each on the argument that caused it; [`Pattern::new`] runs the pattern's.

use crate::abi::KernelParam;
use crate::boundary::Boundary;
use crate::error::{BodyError, DistributionError, Given, PatternError, ScheduleError, SignatureError};
use crate::geometry::{Dims, Radius};
use crate::layout::Layout;
use crate::pattern::Pattern;
use crate::registers::{RegisterEstimate, MAX_REGISTERS_PER_THREAD};
use crate::scalar::ScalarType;
use crate::strategy::Strategy;

/// `got` as a `u32` within `min..=max` (and `accept`ed), or `refuse(got)`.
fn integer<E>(
    got: Given,
    min: u32,
    max: u32,
    accept: fn(u32) -> bool,
    refuse: impl FnOnce(Given) -> E,
) -> Result<u32, E> {
    match got {
        Given::Integer(v) if (min as i64..=max as i64).contains(&v) && accept(v as u32) => Ok(v as u32),
        got => Err(refuse(got)),
    }
}

fn any(_: u32) -> bool {
    true
}

/// The largest tap offset.
pub fn radius(got: Given) -> Result<u32, PatternError> {
    integer(got, 1, Pattern::MAX_RADIUS, any, |got| PatternError::Radius { got, max: Pattern::MAX_RADIUS })
}

/// `radius = (..)` of `components` components for a window of `dims` dimensions: one per
/// dimension.
pub fn radius_components(dims: Dims, components: usize) -> Result<(), PatternError> {
    match components == dims.count() {
        true => Ok(()),
        false => Err(PatternError::RadiusComponents { components, dims }),
    }
}

/// `boundary = name`: one of the rules, by name (`written`: the value as written).
pub fn boundary(written: &str) -> Result<Boundary, PatternError> {
    Boundary::from_name(written).ok_or_else(|| PatternError::Boundary { got: written.to_string() })
}

/// `strategy = name`: one of the strategies, by name (`written`: the value as written).
pub fn strategy(written: &str) -> Result<Strategy, PatternError> {
    Strategy::from_name(written).ok_or_else(|| PatternError::Strategy { got: written.to_string() })
}

/// `distribution = name` or `name(V)` (`size`: V, if written), `auto` aside, which the caller
/// reads; `written`: the value as written. A wrong V is refused by [`vector_size`].
pub fn distribution(name: &str, size: Option<Given>, written: &str) -> Result<Layout, DistributionError> {
    let unknown = || DistributionError::Unknown { got: written.to_string() };
    let Some(size) = size else {
        return match name {
            "round_robin" => Ok(Layout::RoundRobin),
            _ => Err(unknown()),
        };
    };
    match name {
        "granule" => vector_size("granule", size).map(Layout::Granule),
        "window" => vector_size("window", size).map(Layout::Window),
        "staged" => vector_size("staged", size).map(Layout::Staged),
        "planes" => vector_size("planes", size).map(Layout::Planes),
        _ => Err(unknown()),
    }
}

/// The logical warp width: a shuffle segment, so a power of two.
pub fn warp(got: Given) -> Result<u32, PatternError> {
    integer(got, 2, 32, u32::is_power_of_two, |got| PatternError::Warp { got })
}

pub fn outputs_per_thread(got: Given) -> Result<u32, PatternError> {
    integer(got, 1, Pattern::MAX_OUTPUTS_PER_THREAD, any, |got| PatternError::OutputsPerThread {
        got,
        max: Pattern::MAX_OUTPUTS_PER_THREAD,
    })
}

/// `rows_per_warp` (`what`, meaningful from `from` dimensions on) of a stencil of `dims`
/// dimensions: 1 to the maximum, and 1 where the stencil has no such dimension.
pub fn rows_per_warp(what: &'static str, dims: Dims, from: Dims, got: Given) -> Result<u32, PatternError> {
    let most = if from == Dims::Three { Pattern::MAX_PLANES_PER_WARP } else { Pattern::MAX_ROWS_PER_WARP };
    let max = if dims >= from { most } else { 1 };
    integer(got, 1, max, any, |got| PatternError::RowsPerWarp { what, dims, got, max: most })
}

/// `stream = true` streams a 2D tile's rows; only 2D tiles have rows to stream that way.
pub fn stream_rows(dims: Dims, stream: bool) -> Result<(), PatternError> {
    match (stream, dims) {
        (true, Dims::One | Dims::Three) => Err(PatternError::StreamRows { dims }),
        _ => Ok(()),
    }
}

/// `prefetch = true` prefetches a 2D tile's later rows into L2 from its interior path, which only
/// a straight-line 2D tile has.
pub fn prefetch(dims: Dims, stream_rows: bool, prefetch: bool) -> Result<(), PatternError> {
    match (prefetch, dims, stream_rows) {
        (true, Dims::One | Dims::Three, _) => Err(PatternError::Prefetch { dims, stream_rows }),
        (true, _, true) => Err(PatternError::Prefetch { dims, stream_rows }),
        _ => Ok(()),
    }
}

/// Whole warps, so that every lane of a physical warp takes part in every shuffle.
pub fn threads_per_block(got: Given) -> Result<u32, PatternError> {
    integer(
        got,
        32,
        Pattern::MAX_THREADS_PER_BLOCK,
        |t| t % 32 == 0,
        |got| PatternError::ThreadsPerBlock { got, max: Pattern::MAX_THREADS_PER_BLOCK },
    )
}

/// `fuse = T`: time steps per launch of a fused kernel ([`crate::time_steps`]).
pub fn fuse(got: Given) -> Result<u32, PatternError> {
    integer(got, 1, Pattern::MAX_FUSE, any, |got| PatternError::Fuse { got, max: Pattern::MAX_FUSE })
}

pub fn min_blocks_per_sm(got: Given) -> Result<u32, PatternError> {
    integer(got, 1, Pattern::MAX_MIN_BLOCKS_PER_SM, any, |got| PatternError::MinBlocksPerSm {
        got,
        max: Pattern::MAX_MIN_BLOCKS_PER_SM,
    })
}

/// The V of `granule(V)`, `window(V)` or `staged(V)` (`kind`): a power of two, so a lane's
/// elements are whole vectors.
pub fn vector_size(kind: &'static str, got: Given) -> Result<u32, DistributionError> {
    integer(got, 1, 32, u32::is_power_of_two, |got| DistributionError::VectorSize { kind, got })
}

/// A lane computes whole rows of `layout`'s outputs; `None` is the default of 1 output per thread.
pub fn whole_rows(layout: Layout, outputs_per_thread: Option<u32>) -> Result<(), DistributionError> {
    let v = layout.row_length();
    if outputs_per_thread.unwrap_or(Pattern::DEFAULT_OUTPUTS_PER_THREAD) % v == 0 {
        Ok(())
    } else {
        Err(DistributionError::WholeRows { layout, outputs_per_thread })
    }
}

/// Only the register cache has a distribution to choose.
pub fn distribution_for(strategy: Strategy) -> Result<(), DistributionError> {
    match strategy {
        Strategy::RegisterCache => Ok(()),
        strategy => Err(DistributionError::NoRegisterCache { strategy }),
    }
}

/// Component `component` (outermost first) of a tap, `offset`: within its dimension's radius.
pub fn tap(radius: Radius, component: usize, offset: i64) -> Result<i32, BodyError> {
    let r = radius.components()[component];
    match (-i64::from(r)..=i64::from(r)).contains(&offset) {
        true => Ok(offset as i32),
        false => Err(BodyError::TapComponent { dims: radius.dims(), component, offset, radius: r }),
    }
}

/// A stencil's windows, the first `first` and another `other`, each its name, dimensions and
/// element type: they share one shape and one element type.
pub fn same_windows(first: (&str, Dims, ScalarType), other: (&str, Dims, ScalarType)) -> Result<(), SignatureError> {
    let ((first, first_dims, first_element), (name, dims, element)) = (first, other);
    if dims != first_dims {
        let (name, first) = (name.to_string(), first.to_string());
        return Err(SignatureError::WindowDims { name, dims, first, first_dims, element: first_element });
    }
    if element != first_element {
        let (name, first) = (name.to_string(), first.to_string());
        return Err(SignatureError::WindowElement { name, element, first, first_element, dims });
    }
    Ok(())
}

/// The result type of a stencil of `dims` dimensions over `element`s: `got`, `None` where the
/// result is no element type at all.
pub fn result(dims: Dims, element: ScalarType, got: Option<ScalarType>) -> Result<(), SignatureError> {
    match got == Some(element) {
        true => Ok(()),
        false => Err(SignatureError::ResultType { dims, element }),
    }
}

/// The parameters of a stencil of `dims` dimensions, `fields` input fields and `outputs` output
/// fields, each its name and its scalars, in order: the first past the kernel's parameter space is refused.
pub fn parameter_space<'a>(
    dims: Dims,
    fields: u32,
    outputs: u32,
    params: impl IntoIterator<Item = (&'a str, &'a [ScalarType])>,
) -> Result<(), SignatureError> {
    let mut types = Vec::new();
    for (param, (name, scalars)) in params.into_iter().enumerate() {
        types.extend_from_slice(scalars);
        let bytes = KernelParam::space(&KernelParam::list(dims, fields, outputs, &types));
        if bytes > KernelParam::MAX_SPACE {
            return Err(SignatureError::ParamSpace {
                param,
                name: name.to_string(),
                bytes,
                max: KernelParam::MAX_SPACE,
            });
        }
    }
    Ok(())
}

/// A compiled kernel whose cache and addressing alone exceed a thread's registers cannot run.
pub fn registers(pattern: Pattern, estimate: RegisterEstimate) -> Result<(), ScheduleError> {
    if estimate.exceeds_limit() {
        Err(ScheduleError::RegistersExceeded {
            radius: pattern.radius(),
            outputs_per_thread: pattern.outputs_per_thread(),
            cache: estimate.cache,
            live_values: estimate.live_values,
            addressing: estimate.addressing,
            total: estimate.total,
            max: MAX_REGISTERS_PER_THREAD,
        })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_argument_is_refused_outside_its_range_and_the_refusal_says_what_was_given() {
        assert_eq!(radius(Given::Integer(0)), Err(PatternError::Radius { got: Given::Integer(0), max: 4096 }));
        assert_eq!(radius(Given::Integer(4096)), Ok(4096));
        let e = radius(Given::Text("2.5".into())).unwrap_err();
        assert_eq!(e.to_string(), "radius must be an integer from 1 to 4096, got `2.5`");
        assert_eq!(
            outputs_per_thread(Given::Integer(65)).unwrap_err().to_string(),
            "outputs_per_thread must be an integer from 1 to 64, got 65"
        );
        assert!(min_blocks_per_sm(Given::Integer(33)).is_err());
    }

    #[test]
    fn warps_and_vector_sizes_are_powers_of_two_and_blocks_whole_warps() {
        assert_eq!(warp(Given::Integer(16)), Ok(16));
        assert!(warp(Given::Integer(24)).is_err());
        assert!(warp(Given::Integer(64)).is_err());
        assert_eq!(vector_size("granule", Given::Integer(8)), Ok(8));
        assert_eq!(
            vector_size("staged", Given::Integer(3)).unwrap_err().to_string(),
            "staged(V) needs V a power of two from 1 to 32 (whole 16-byte vectors), got 3"
        );
        assert_eq!(threads_per_block(Given::Integer(96)), Ok(96));
        assert!(threads_per_block(Given::Integer(100)).is_err());
    }

    #[test]
    fn a_lane_computes_whole_rows_and_the_default_of_one_output_fits_only_v_1() {
        assert_eq!(whole_rows(Layout::Window(4), Some(8)), Ok(()));
        assert_eq!(whole_rows(Layout::Granule(1), None), Ok(()));
        let e = whole_rows(Layout::Window(8), Some(12)).unwrap_err();
        assert_eq!(e.to_string(), "window(8) gives each lane whole rows of 8 consecutive outputs, so outputs_per_thread must be a multiple of 8, got 12");
        let e = whole_rows(Layout::Staged(4), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "staged(4) gives each lane whole rows of 4 consecutive outputs: set outputs_per_thread to a multiple of 4"
        );
    }

    #[test]
    fn names_are_looked_up_here_and_a_refusal_lists_every_name() {
        assert_eq!(distribution("window", Some(Given::Integer(8)), "window(8)"), Ok(Layout::Window(8)));
        assert_eq!(distribution("round_robin", None, "round_robin"), Ok(Layout::RoundRobin));
        assert!(matches!(
            distribution("granule", Some(Given::Integer(3)), "granule(3)"),
            Err(DistributionError::VectorSize { .. })
        ));
        assert_eq!(
            distribution("granule", None, "granule").unwrap_err().to_string(),
            "distribution must be `auto`, `round_robin`, `granule(V)`, `window(V)`, `staged(V)` or `planes(V)` (3D) with V \
             a power of two from 1 to 32, got `granule`"
        );
        assert_eq!(boundary("wrap"), Ok(Boundary::Wrap));
        assert_eq!(
            boundary("periodic").unwrap_err().to_string(),
            "boundary must be one of `valid`, `zero`, `clamp`, `wrap`, got `periodic`"
        );
        assert_eq!(strategy("naive"), Ok(Strategy::Naive));
        assert!(strategy("fast").is_err());
    }

    #[test]
    fn taps_radius_tuples_and_parameters_are_checked_against_the_window() {
        let r = Radius::yx(1, 2);
        assert_eq!(tap(r, 1, -2), Ok(-2));
        assert_eq!(tap(r, 0, 2).unwrap_err().to_string(), "dy = 2 is outside radius ry = 1: dy must lie in -1..=1");
        assert_eq!(
            tap(Radius::x(3), 0, 4).unwrap_err().to_string(),
            "tap offset 4 is outside the radius: taps must lie in -3..=3"
        );
        assert_eq!(radius_components(Dims::Two, 2), Ok(()));
        assert_eq!(
            radius_components(Dims::Three, 2).unwrap_err().to_string(),
            "radius has 2 components but `Window3` has 3 dimensions: write `radius = (rz, ry, rx)` or one number for all three"
        );
        let small = [ScalarType::F32; 4];
        let large = [ScalarType::F64; 600];
        assert_eq!(parameter_space(Dims::One, 1, 1, [("a", &small[..])]), Ok(()));
        let e = parameter_space(Dims::One, 1, 1, [("a", &small[..]), ("b", &large[..])]).unwrap_err();
        assert!(matches!(e, SignatureError::ParamSpace { param: 1, .. }), "{e:?}");
    }

    #[test]
    fn only_the_register_cache_takes_a_distribution() {
        assert_eq!(distribution_for(Strategy::RegisterCache), Ok(()));
        assert_eq!(
            distribution_for(Strategy::Naive),
            Err(DistributionError::NoRegisterCache { strategy: Strategy::Naive })
        );
    }
}
