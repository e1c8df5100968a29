//! From what a stencil's attribute declares to the kernels it compiles to, and every refusal on
//! the way: the defaults of what the attribute leaves out, which values do not go together, the
//! distribution the cost model picks (and what stands in where it picks none), the register
//! budget, the fused kernel. A front end (the macro) reads each argument's syntax into an
//! [`Attribute`], checks each value on its own ([`crate::validate`]), and puts each [`Refusal`]
//! on the tokens of the [`Argument`] it names; every decision is made here.

use crate::auto;
use crate::body::Body;
use crate::boundary::Boundary;
use crate::error::{Argument, Error, PatternError, PlanError, Refusal, ScheduleError};
use crate::geometry::{Dims, Radius};
use crate::layout::Layout;
use crate::pattern::Pattern;
use crate::program::WarpProgram;
use crate::strategy::Strategy;
use crate::validate;

/// One argument of the attribute as the front end read it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arg<T> {
    /// Left out: its default applies.
    #[default]
    Absent,
    /// Written, and refused on its own (the front end reported why): nothing is declared, and
    /// no combination with it is checked.
    Refused,
    /// Written and valid on its own.
    Given(T),
}

impl<T: Copy> Arg<T> {
    /// The value, if one was given and accepted.
    pub fn given(self) -> Option<T> {
        match self {
            Arg::Given(v) => Some(v),
            _ => None,
        }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Arg<U> {
        match self {
            Arg::Absent => Arg::Absent,
            Arg::Refused => Arg::Refused,
            Arg::Given(v) => Arg::Given(f(v)),
        }
    }

    pub fn is_given(self) -> bool {
        matches!(self, Arg::Given(_))
    }

    fn is_refused(self) -> bool {
        matches!(self, Arg::Refused)
    }

    /// The value, or `default` where the argument was left out (or refused).
    fn or(self, default: T) -> T {
        self.given().unwrap_or(default)
    }
}

/// What `distribution = ...` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DistributionArg {
    /// `distribution = auto`: the cost model picks, and says why where it picks none.
    Auto,
    /// A distribution by name.
    Layout(Layout),
}

/// The attribute's arguments, `#[stencil(radius = 2, outputs_per_thread = 4, ...)]`, each as
/// the front end read it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Attribute {
    /// One component per dimension of the window (`radius = r` repeats `r`).
    pub radius: Arg<Radius>,
    pub warp: Arg<u32>,
    pub outputs_per_thread: Arg<u32>,
    pub rows_per_warp: Arg<u32>,
    pub planes_per_warp: Arg<u32>,
    pub stream: Arg<bool>,
    pub prefetch: Arg<bool>,
    pub boundary: Arg<Boundary>,
    pub strategy: Arg<Strategy>,
    pub distribution: Arg<DistributionArg>,
    pub max_threads_per_block: Arg<u32>,
    pub min_blocks_per_sm: Arg<u32>,
    pub fuse: Arg<u32>,
    /// Whether the attribute's syntax is wrong somewhere (an unknown, duplicate or malformed
    /// argument, reported by the front end): then nothing is declared either.
    pub malformed: bool,
}

impl Attribute {
    /// The declaration, or the refusals of values that do not go together (each on the
    /// argument to change) for a stencil of `dims` dimensions (`None`: the signature has no
    /// window, whose own error says so, and nothing is checked against the dimensions). The
    /// refusals are empty where only what the front end reported keeps the declaration from
    /// being made: an argument refused on its own, the missing radius, a malformed attribute.
    pub fn declare(&self, dims: Option<Dims>) -> Result<Declaration, Vec<Refusal>> {
        let refusals = self.combinations(dims);
        let refused = [
            self.radius.is_refused(),
            self.warp.is_refused(),
            self.outputs_per_thread.is_refused(),
            self.rows_per_warp.is_refused(),
            self.planes_per_warp.is_refused(),
            self.stream.is_refused(),
            self.prefetch.is_refused(),
            self.boundary.is_refused(),
            self.strategy.is_refused(),
            self.distribution.is_refused(),
            self.max_threads_per_block.is_refused(),
            self.min_blocks_per_sm.is_refused(),
            self.fuse.is_refused(),
        ];
        if !refusals.is_empty() || refused.contains(&true) || self.malformed {
            return Err(refusals);
        }
        let Arg::Given(radius) = self.radius else { return Err(refusals) };
        match self.pattern(radius) {
            Ok(pattern) => Ok(Declaration { attribute: *self, pattern }),
            Err(e) => Err(vec![Refusal::new(Argument::Attribute, e)]),
        }
    }

    /// The values that do not go together, each refused on the argument to change: a prefetching
    /// tile of a stencil without one, a distribution without a register cache, a distribution
    /// whose rows the outputs per thread do not fill. A value refused on its own (a streamed
    /// tile of a stencil without rows to stream among them: [`validate::stream_rows`] checks it
    /// against the window alone) takes part in none.
    fn combinations(&self, dims: Option<Dims>) -> Vec<Refusal> {
        let mut refusals = Vec::new();
        if let (Arg::Given(on), Some(d)) = (self.prefetch, dims) {
            if let Err(e) = validate::prefetch(d, self.stream.or(false), on) {
                refusals.push(Refusal::new(Argument::Prefetch, e));
            }
        }
        if self.distribution.is_given() {
            if let Err(e) = validate::distribution_for(self.strategy.or(Strategy::default())) {
                refusals.push(Refusal::new(Argument::Distribution, e));
            }
        }
        // Rows are checked against an outputs_per_thread that was valid, or left at its default.
        if let (Arg::Given(DistributionArg::Layout(layout)), false) =
            (self.distribution, self.outputs_per_thread.is_refused())
        {
            if let Err(e) = validate::whole_rows(layout, self.outputs_per_thread.given()) {
                refusals.push(Refusal::new(Argument::Distribution, e));
            }
        }
        refusals
    }

    /// The declared pattern: the given values, and the defaults of the others.
    fn pattern(&self, radius: Radius) -> Result<Pattern, PatternError> {
        let warp = self.warp.or(Pattern::DEFAULT_WARP);
        let outputs = self.outputs_per_thread.or(Pattern::DEFAULT_OUTPUTS_PER_THREAD);
        let boundary = self.boundary.or(Boundary::Valid);
        let stream = self.stream.or(false);
        let pattern = match radius.dims() {
            Dims::One => Pattern::new(radius.along_x(), warp, outputs, boundary),
            d => {
                let rows = match stream {
                    true => Pattern::DEFAULT_STREAMED_ROWS,
                    false => Pattern::default_rows_per_warp(d),
                };
                let planes = Pattern::default_planes_per_warp(d);
                let (rows, planes) = (self.rows_per_warp.or(rows), self.planes_per_warp.or(planes));
                Pattern::grid(radius, warp, outputs, rows, planes, boundary)
            }
        };
        pattern
            .and_then(|p| p.with_streamed_rows(stream))
            .and_then(|p| p.with_prefetch(self.prefetch.or(false)))
            .and_then(|p| {
                let threads = self.max_threads_per_block.or(Pattern::DEFAULT_THREADS_PER_BLOCK);
                p.with_launch_bounds(threads, self.min_blocks_per_sm.given())
            })
    }
}

/// An attribute whose every value was accepted, with its pattern: what [`Declaration::plan`]
/// compiles once the body is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Declaration {
    attribute: Attribute,
    pattern: Pattern,
}

/// Where the distribution comes from.
enum Choose {
    /// The cost model's choice; `asked`: `distribution = auto`, whose failure is refused, else
    /// (no `distribution`, with the register cache) the round-robin distribution stands in, and
    /// compiling it says what does not fit.
    CostModel {
        asked: bool,
    },
    Named(Layout),
}

/// What a declaration compiles to: the pattern and distribution chosen, the kernel's warp
/// program, and the fused kernel's.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The declared pattern with what the cost model chose (outputs per thread, launch bounds,
    /// prefetch).
    pub pattern: Pattern,
    pub strategy: Strategy,
    pub layout: Layout,
    pub program: WarpProgram,
    /// Time steps one launch of the fused kernel runs (`fuse = T`, or the cost model's choice).
    pub steps_per_launch: u32,
    /// The fused kernel's program where `steps_per_launch` is more than 1 (a run's last launch of
    /// fewer steps compiles its own at run time).
    pub fused: Option<WarpProgram>,
}

impl Declaration {
    /// The declared pattern, before the cost model's choices.
    pub fn pattern(&self) -> Pattern {
        self.pattern
    }

    /// The strategy, the register cache unless the attribute says otherwise.
    pub fn strategy(&self) -> Strategy {
        self.attribute.strategy.or(Strategy::default())
    }

    /// What the attribute fixed, which the cost model keeps.
    fn given(&self) -> auto::Given {
        let a = &self.attribute;
        auto::Given {
            outputs: a.outputs_per_thread.is_given(),
            rows: a.rows_per_warp.is_given(),
            bounds: a.max_threads_per_block.is_given() || a.min_blocks_per_sm.is_given(),
            prefetch: a.prefetch.is_given(),
        }
    }

    fn choose(&self) -> Choose {
        match (self.attribute.distribution, self.strategy()) {
            (Arg::Given(DistributionArg::Auto), _) => Choose::CostModel { asked: true },
            (Arg::Given(DistributionArg::Layout(layout)), _) => Choose::Named(layout),
            (_, Strategy::RegisterCache) => Choose::CostModel { asked: false },
            _ => Choose::Named(Layout::default()),
        }
    }

    /// The argument a tile's size is written on: `outputs_per_thread` where the attribute raised
    /// it from 1, else `radius`.
    fn tile(&self, pattern: Pattern) -> Argument {
        match (pattern.outputs_per_thread(), self.attribute.outputs_per_thread) {
            (2.., Arg::Given(_)) => Argument::OutputsPerThread,
            _ => Argument::Radius,
        }
    }

    /// Compiles the declaration for `body`: the plan, or every refusal (the kernel's own first;
    /// where it compiles, a prefetch it cannot make and the fused kernel's, together).
    pub fn plan(&self, body: &Body) -> Result<Plan, Vec<Refusal>> {
        let strategy = self.strategy();
        let (pattern, layout) = match self.choose() {
            Choose::CostModel { asked } => match auto::choose_given(self.pattern, self.given(), body) {
                Ok(choice) => (choice.pattern, choice.layout),
                Err(e) if asked => return Err(vec![Refusal::new(Argument::Function, PlanError::Auto(e))]),
                // Nothing fits: compiling the round-robin distribution reports the precise error.
                Err(_) => (self.pattern, Layout::RoundRobin),
            },
            Choose::Named(layout) => (self.pattern, layout),
        };
        let program = match WarpProgram::compile_for(pattern, strategy, layout, body) {
            Ok(program) => program,
            Err(e) => {
                let named = matches!(self.attribute.distribution, Arg::Given(DistributionArg::Layout(_)));
                let argument = match &e {
                    // A stage too large for shared memory is the named distribution's doing.
                    Error::Schedule(ScheduleError::StageTooLarge { .. } | ScheduleError::RingTooLarge { .. })
                        if named =>
                    {
                        Argument::Distribution
                    }
                    // The block's stage grows with its tile.
                    Error::Schedule(ScheduleError::BlockStageTooLarge { .. }) => self.tile(pattern),
                    _ => Argument::Function,
                };
                return Err(vec![Refusal::new(argument, PlanError::Schedule(e))]);
            }
        };
        if let Err(e) = validate::registers(pattern, program.register_estimate()) {
            return Err(vec![Refusal::new(self.tile(pattern), e)]);
        }
        let mut refusals = Vec::new();
        // `prefetch = true` on a kernel with no interior path of vector loads would print nothing.
        if self.attribute.prefetch == Arg::Given(true) && !program.machine.prefetches() {
            refusals.push(Refusal::new(Argument::Prefetch, PlanError::PrefetchWithoutInterior { strategy, layout }));
        }
        // The fused kernel, `fuse = T` time steps per launch or the cost model's choice; none for
        // a 2D tile that streams its rows (its program's pattern is the 3D one it runs as).
        let fused = match program.declared.streams_rows() {
            false => self.fused(program.pattern, body),
            true => Ok((1, None)),
        };
        let (steps_per_launch, fused) = match fused {
            Ok(fused) => fused,
            Err(refusal) => {
                refusals.push(refusal);
                (1, None)
            }
        };
        match refusals.is_empty() {
            true => Ok(Plan { pattern, strategy, layout, program, steps_per_launch, fused }),
            false => Err(refusals),
        }
    }

    /// The fused kernel of `pattern` (the compiled kernel's): `fuse = T` (refused on it where
    /// the tile cannot hold `T` steps or the kernel would need too many registers), or the cost
    /// model's choice, which only chooses what compiles.
    fn fused(&self, pattern: Pattern, body: &Body) -> Result<(u32, Option<WarpProgram>), Refusal> {
        let steps = match self.attribute.fuse {
            Arg::Given(steps) => steps,
            _ => auto::steps_per_launch(&pattern, body),
        };
        if steps == 1 {
            return Ok((steps, None));
        }
        let compiled = WarpProgram::compile_steps(pattern, body, steps).and_then(|program| {
            validate::registers(program.pattern, program.register_estimate()).map(|()| program).map_err(Error::from)
        });
        match (compiled, self.attribute.fuse) {
            (Ok(program), _) => Ok((steps, Some(program))),
            (Err(error), Arg::Given(_)) => Err(Refusal::new(Argument::Fuse, PlanError::Fuse { steps, error })),
            (Err(e), _) => Err(Refusal::new(Argument::Function, PlanError::FuseChosen(e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::{BinaryOp, Node};
    use crate::geometry::Offset;
    use crate::scalar::ScalarType;

    /// `w[-1] + w[0] + w[1]` (1D) or `w[(-1, 0)] + w[(0, 0)] + w[(0, 1)]` (2D), over f32.
    fn sum(radius: Radius) -> Body {
        let taps: Vec<Offset> = match radius.dims() {
            Dims::One => [-1, 0, 1].map(Offset::x).to_vec(),
            _ => [(-1, 0), (0, 0), (0, 1)].map(|(y, x)| Offset::new(&[y, x]).expect("2D")).to_vec(),
        };
        let mut nodes: Vec<Node> = taps.into_iter().map(|offset| Node::Tap(0, offset)).collect();
        nodes.push(Node::Binary(BinaryOp::Add, 0, 1));
        nodes.push(Node::Binary(BinaryOp::Add, 3, 2));
        Body::new(ScalarType::F32, 1, Vec::new(), radius, nodes, vec![4]).expect("a valid body")
    }

    fn attribute(radius: Radius) -> Attribute {
        Attribute { radius: Arg::Given(radius), ..Attribute::default() }
    }

    fn arguments(refusals: &[Refusal]) -> Vec<Argument> {
        refusals.iter().map(|r| r.argument).collect()
    }

    #[test]
    fn what_the_attribute_leaves_out_takes_its_default() {
        let r = Radius::yx(1, 1);
        let plain = attribute(r).declare(Some(Dims::Two)).expect("declared").pattern();
        assert_eq!((plain.rows_per_warp(), plain.planes_per_warp(), plain.warp()), (4, 1, 32));
        assert_eq!((plain.threads_per_block(), plain.boundary()), (256, Boundary::Valid));
        let streamed = Attribute { stream: Arg::Given(true), ..attribute(r) };
        let streamed = streamed.declare(Some(Dims::Two)).expect("declared").pattern();
        assert_eq!((streamed.rows_per_warp(), streamed.streams_rows()), (Pattern::DEFAULT_STREAMED_ROWS, true));
    }

    #[test]
    fn values_that_do_not_go_together_are_refused_on_the_argument_to_change() {
        let r = Radius::x(1);
        let prefetch = Attribute { prefetch: Arg::Given(true), ..attribute(r) };
        let refusals = prefetch.declare(Some(Dims::One)).expect_err("1D has no rows to prefetch");
        assert_eq!(arguments(&refusals), [Argument::Prefetch]);
        let naive = Attribute {
            strategy: Arg::Given(Strategy::Naive),
            distribution: Arg::Given(DistributionArg::Layout(Layout::Window(4))),
            ..attribute(r)
        };
        // No register cache, and window(4) with the default single output per thread.
        let refusals = naive.declare(Some(Dims::One)).expect_err("two refusals");
        assert_eq!(arguments(&refusals), [Argument::Distribution, Argument::Distribution]);
        // An outputs_per_thread refused on its own takes part in no combination.
        let refused = Attribute { outputs_per_thread: Arg::Refused, ..naive };
        let refusals = refused.declare(Some(Dims::One)).expect_err("refused");
        assert_eq!(arguments(&refusals), [Argument::Distribution]);
        let malformed = Attribute { malformed: true, ..attribute(r) };
        assert_eq!(malformed.declare(Some(Dims::One)), Err(Vec::new()));
        assert_eq!(Attribute::default().declare(Some(Dims::One)), Err(Vec::new()), "no radius");
    }

    #[test]
    fn the_cost_model_picks_the_distribution_unless_one_is_named_or_the_strategy_has_none() {
        let (r, body) = (Radius::x(1), sum(Radius::x(1)));
        let chosen = attribute(r).declare(Some(Dims::One)).and_then(|d| d.plan(&body)).expect("compiles");
        assert_ne!(chosen.layout, Layout::RoundRobin, "the cost model weighs round-robin last");
        let naive = Attribute { strategy: Arg::Given(Strategy::Naive), ..attribute(r) };
        let plan = naive.declare(Some(Dims::One)).and_then(|d| d.plan(&body)).expect("compiles");
        assert_eq!((plan.strategy, plan.layout), (Strategy::Naive, Layout::RoundRobin));
        let named = Attribute { distribution: Arg::Given(DistributionArg::Layout(Layout::RoundRobin)), ..attribute(r) };
        let plan = named.declare(Some(Dims::One)).and_then(|d| d.plan(&body)).expect("compiles");
        assert_eq!(plan.layout, Layout::RoundRobin);
    }

    #[test]
    fn a_refusal_of_the_compiled_kernel_names_the_argument_and_says_what_the_macro_said() {
        let grid = Radius::yx(1, 1);
        let fuse = Attribute { fuse: Arg::Given(100), ..attribute(grid) };
        let refusals = fuse.declare(Some(Dims::Two)).and_then(|d| d.plan(&sum(grid))).expect_err("too many steps");
        assert_eq!(arguments(&refusals), [Argument::Fuse]);
        assert!(refusals[0].to_string().starts_with("fuse = 100: cannot fuse 100 time steps"), "{}", refusals[0]);
        let prefetch = Attribute {
            prefetch: Arg::Given(true),
            strategy: Arg::Given(Strategy::Naive),
            distribution: Arg::Absent,
            ..attribute(grid)
        };
        let refusals = prefetch.declare(Some(Dims::Two)).and_then(|d| d.plan(&sum(grid))).expect_err("no interior");
        assert_eq!(arguments(&refusals), [Argument::Prefetch]);
        assert!(refusals[0].to_string().contains("this kernel (naive, distribution round_robin) does not have"));
    }
}
