//! The driver: the one way from a stencil's body and pattern to the program every back end
//! reads ([`WarpProgram`]), for one time step per launch and for fused steps, in 1D, 2D and 3D.
//!
//! A kernel goes through the passes of [`Pass`] that its route lists ([`Steps::passes`]), in
//! that order. A pass either refuses the stencil (an [`Error`] that says what to change) or
//! hands the next pass what it built; in tests and debug builds the checker of what that pass
//! promises runs before the next pass starts ([`checks`]), so a bug fails at the pass that made
//! it, not as a wrong number on a GPU. The program records the passes it went through
//! ([`WarpProgram::passes`]) and its text form prints them.
//!
//! The fused route has no instruction selection of its own: its exchanges and per-step
//! boundary rules have no one-step instruction form, so its lowering pass builds the machine
//! program's statements directly (`time_steps::lower_fused`).

pub mod checks;

use std::fmt;

use crate::body::Body;
use crate::distribution::Distribution;
use crate::error::{Error, ScheduleError};
use crate::geometry::Dims;
use crate::launch_map::LaunchMap;
use crate::machine::Machine;
use crate::pattern::Pattern;
use crate::pipeline::Pipeline;
use crate::program::{Selected, WarpProgram};
use crate::schedule::{LoadPlan, Schedule};
use crate::strategy::Strategy;
use crate::time_steps::FusedTile;

/// How many time steps one launch runs, and what the one-step route distributes.
#[derive(Clone, Copy)]
pub enum Steps<'a> {
    /// One step: the register cache (or a baseline strategy) with `distribution`.
    One { strategy: Strategy, distribution: &'a dyn Distribution },
    /// That many steps in one launch, each lane owning its elements ([`crate::time_steps`]).
    Fused(u32),
}

/// A pass of the driver, in the order the routes run them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// The body as the tile runs it: one step sums `0.0 + a + b + ...` as `(a + b + ...) + 0.0`
    /// ([`crate::zero_start`]) and lifts a 2D body whose tile streams its rows to 3D
    /// ([`Body::lifted`]); refuses a body of other dimensions than the tile (fused steps: taps
    /// past the radius, more output fields than input fields).
    Normalize,
    /// What the tile can hold: one step, the input rows and radius straight-line code keeps and
    /// the distributions of the tile's dimensions; fused steps, the tile of that many steps
    /// ([`FusedTile::new`]) and the launch's pattern.
    Admit,
    /// Along x, which lane fetches which element from which register ([`Schedule::plan`]).
    Schedule,
    /// The warp program of one step: stages, cache loads, the body's nodes for every output,
    /// stores (`program::select`).
    Select,
    /// A streaming tile's steps overlapped ([`Pipeline::build`]); other tiles pass through.
    Pipeline,
    /// Which block runs which tile ([`LaunchMap`]).
    Place,
    /// The machine program ([`Machine::lower`]; fused steps, `time_steps::lower_fused`).
    Lower,
}

impl Steps<'_> {
    /// The passes of this route, in the order they run.
    pub fn passes(&self) -> &'static [Pass] {
        match self {
            Steps::One { .. } => {
                &[Pass::Normalize, Pass::Admit, Pass::Schedule, Pass::Select, Pass::Pipeline, Pass::Place, Pass::Lower]
            }
            Steps::Fused(_) => &[Pass::Normalize, Pass::Admit, Pass::Place, Pass::Lower],
        }
    }
}

impl fmt::Display for Pass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Pass::Normalize => "normalize",
            Pass::Admit => "admit",
            Pass::Schedule => "schedule",
            Pass::Select => "select",
            Pass::Pipeline => "pipeline",
            Pass::Place => "place",
            Pass::Lower => "lower",
        })
    }
}

/// Compiles `body` on `pattern` through the passes of `steps`, checking each pass's result in
/// tests and debug builds.
pub fn compile(pattern: Pattern, body: &Body, steps: Steps) -> Result<WarpProgram, Error> {
    finish(run(pattern, body, steps, Pass::Lower, cfg!(debug_assertions))?)
}

/// Compiles a cost model's candidate: the passes without their checks. The model compiles
/// dozens of candidates for every kernel the macro prints (the checks cost about as much as
/// the passes), and the one it chooses is compiled again through [`compile`], checked.
pub(crate) fn compile_candidate(pattern: Pattern, body: &Body, steps: Steps) -> Result<WarpProgram, Error> {
    finish(run(pattern, body, steps, Pass::Lower, false)?)
}

fn finish(draft: Draft) -> Result<WarpProgram, Error> {
    let passes = draft.passes;
    let mut program = checks::built(draft.program, Pass::Lower, "the program")?;
    program.passes = passes;
    Ok(program)
}

/// The kernel after the passes of `steps` up to and including `through` (all of them where the
/// route does not list it), each checked in tests and debug builds: what a test that breaks a
/// pass's result starts from ([`checks::after`]).
pub fn run_through<'a>(pattern: Pattern, body: &Body, steps: Steps<'a>, through: Pass) -> Result<Draft<'a>, Error> {
    run(pattern, body, steps, through, cfg!(debug_assertions))
}

fn run<'a>(pattern: Pattern, body: &Body, steps: Steps<'a>, through: Pass, checked: bool) -> Result<Draft<'a>, Error> {
    let mut draft = Draft::new(pattern, body, steps);
    for &pass in steps.passes() {
        draft.run(pass)?;
        if checked {
            checks::after(pass, &draft)?;
        }
        draft.passes.push(pass);
        if pass == through {
            break;
        }
    }
    Ok(draft)
}

/// A kernel between passes: what the passes so far have built.
pub struct Draft<'a> {
    pub steps: Steps<'a>,
    /// The pattern as declared (the grids' dimensions).
    pub declared: Pattern,
    /// The tile the program computes: the declared one, or the 3D tile a 2D tile that streams
    /// its rows lifts to; for fused steps, the launch's pattern once admitted.
    pub pattern: Pattern,
    pub body: Body,
    pub schedule: Option<Schedule>,
    pub selected: Option<Selected>,
    pub pipeline: Option<Pipeline>,
    pub tile: Option<FusedTile>,
    pub launch: Option<LaunchMap>,
    pub program: Option<WarpProgram>,
    /// The passes run so far.
    pub passes: Vec<Pass>,
}

impl<'a> Draft<'a> {
    fn new(pattern: Pattern, body: &Body, steps: Steps<'a>) -> Draft<'a> {
        Draft {
            steps,
            declared: pattern,
            pattern,
            body: body.clone(),
            schedule: None,
            selected: None,
            pipeline: None,
            tile: None,
            launch: None,
            program: None,
            passes: Vec::new(),
        }
    }

    fn run(&mut self, pass: Pass) -> Result<(), Error> {
        match (pass, self.steps) {
            (Pass::Normalize, Steps::One { .. }) => {
                self.body = crate::zero_start::hoist(&self.body);
                self.pattern = self.declared.lifted();
                if self.declared.streams_rows() && self.body.radius().dims() == Dims::Two {
                    self.body = self.body.lifted();
                }
                if self.body.radius().dims() != self.pattern.dims() {
                    let (body, pattern) = (self.body.radius().dims(), self.pattern.dims());
                    return Err(ScheduleError::Dimensions { body, pattern }.into());
                }
            }
            (Pass::Normalize, Steps::Fused(_)) => crate::time_steps::admit_body(&self.pattern, &self.body)?,
            (Pass::Admit, Steps::One { strategy, distribution }) => {
                crate::program::admit(self.pattern, strategy, distribution)?;
            }
            (Pass::Admit, Steps::Fused(steps)) => {
                let tile = FusedTile::new(&self.declared, self.body.element(), steps)?;
                self.pattern = tile.launch_pattern(&self.declared);
                self.tile = Some(tile);
            }
            (Pass::Schedule, Steps::One { strategy, distribution }) => {
                let taps = crate::program::taps_along_x(&self.body);
                self.schedule = Some(Schedule::plan(self.pattern.along_x(), strategy, distribution, &taps)?);
            }
            (Pass::Select, Steps::One { strategy, distribution }) => {
                let schedule = checks::built(self.schedule.as_ref(), pass, "the schedule")?;
                self.selected =
                    Some(crate::program::select(self.pattern, strategy, distribution, &self.body, schedule)?);
            }
            (Pass::Pipeline, Steps::One { .. }) => {
                let selected = checks::built(self.selected.as_mut(), pass, "the selected instructions")?;
                if self.pattern.streams() && selected.ring.is_none() {
                    let instrs = std::mem::take(&mut selected.instrs);
                    let step = self.pattern.step();
                    let (instrs, pipeline) = Pipeline::build(step, instrs, &selected.cache, &mut selected.reg_types);
                    selected.instrs = instrs;
                    self.pipeline = Some(pipeline);
                }
            }
            (Pass::Place, Steps::One { strategy, distribution }) => {
                let stacked = distribution.layout().stacks_warps(strategy, &self.declared);
                self.launch = Some(LaunchMap::new(self.pattern, stacked));
            }
            (Pass::Place, Steps::Fused(_)) => {
                let tile = checks::built(self.tile.as_ref(), pass, "the fused tile")?;
                self.launch = Some(LaunchMap::fused(tile, self.pattern));
            }
            (Pass::Lower, _) => self.program = Some(self.lower()?),
            // The fused route lists none of the one-step passes ([`Steps::passes`]).
            (Pass::Schedule | Pass::Select | Pass::Pipeline, Steps::Fused(_)) => {}
        }
        Ok(())
    }

    /// The program with its machine program: the one-step route lowers the warp program, the
    /// fused route builds the statements of its tile.
    fn lower(&mut self) -> Result<WarpProgram, Error> {
        let launch = checks::built(self.launch.take(), Pass::Lower, "the launch map")?;
        let body = &self.body;
        let mut program = match self.steps {
            Steps::One { strategy, distribution } => {
                let schedule = checks::built(self.schedule.take(), Pass::Lower, "the schedule")?;
                let Selected { instrs, reg_types, fetch_order, ring, .. } =
                    checks::built(self.selected.take(), Pass::Lower, "the selected instructions")?;
                WarpProgram {
                    pattern: self.pattern,
                    declared: self.declared,
                    strategy,
                    element: body.element(),
                    fields: body.fields(),
                    output_fields: body.output_fields(),
                    params: body.params().to_vec(),
                    distribution: distribution.describe(),
                    vector: distribution.vector(),
                    staged: distribution.staged(),
                    launch,
                    ring,
                    schedule,
                    row_registers: distribution.registers(),
                    instrs,
                    pipeline: self.pipeline.take(),
                    fused: None,
                    fetch_order,
                    reg_types,
                    machine: Machine::default(),
                    passes: Vec::new(),
                }
            }
            Steps::Fused(_) => {
                let tile = checks::built(self.tile, Pass::Lower, "the fused tile")?;
                let launch_pattern = self.pattern;
                let (machine, reg_types) = crate::time_steps::lower_fused(&self.declared, body, tile, &launch_pattern);
                // Each lane owns its elements: a schedule of its own loads, no exchange phases.
                let loads = (0..tile.per_lane).map(|reg| LoadPlan { reg, lanes: (0, tile.warp) }).collect();
                let lead = tile.schedule_lead(self.declared.boundary());
                return Ok(WarpProgram {
                    pattern: launch_pattern,
                    declared: launch_pattern,
                    strategy: Strategy::RegisterCache,
                    element: body.element(),
                    fields: body.fields(),
                    output_fields: body.output_fields(),
                    params: body.params().to_vec(),
                    distribution: crate::time_steps::fused_distribution(&tile),
                    vector: tile.per_lane,
                    staged: false,
                    ring: None,
                    schedule: Schedule::owned(launch_pattern, lead, loads),
                    row_registers: tile.per_lane,
                    instrs: Vec::new(),
                    pipeline: None,
                    fused: Some(tile),
                    launch,
                    fetch_order: Vec::new(),
                    reg_types,
                    machine,
                    passes: Vec::new(),
                });
            }
        };
        program.machine = Machine::lower(&program);
        Ok(program)
    }
}
