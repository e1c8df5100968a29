//! A grid split over several GPUs in one process ([`SplitGrid`]): bands of rows
//! ([`rc_core::Decomposition`]), one per rank, each rank on a GPU (round-robin over the devices,
//! so several ranks may share one) with a stream of its own, stepped by the same launches as one
//! GPU (`launch_steps_cudarc_grid`) on its local grid, halos exchanged on the device between
//! runs of steps. Bit for bit one GPU's `run_steps`, which is bit for bit `run_cpu_steps`
//! (`rc_core::decomposition` says why the halo makes it exact).
//!
//! Ordering, all on the GPUs (the host only queues): whatever writes a rank's state (its steps,
//! `scatter`, `fill`) is queued on its stream after it waited for the exchange copies that read
//! its state last time (`received` of every rank that reads from it); an exchange records
//! `ready` on every rank's stream, queues each halo copy on the receiving rank's stream after it
//! waited for the sending rank's `ready`, and records the receiver's `received` after its copies.
//! So no copy reads a band while its rank writes it, and no step starts before its halos
//! arrived.

use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtr, DeviceRepr, ValidAsZeroBits};
use rc_core::{Decomposition, Element, Extent, HaloCopy, Params, Stencil};

use crate::error::Error;
use crate::halo_copy::HaloCopier;
use crate::steps::Holds;
use crate::with_cudarc::{cudarc_driver, launch_steps_cudarc_rows};

/// A stencil's grid split into bands over GPUs of this process, holding every rank's part of
/// every field on its GPU. Made with [`SplitGrid::new`] (every visible GPU) or
/// [`SplitGrid::on_devices`]; filled by [`SplitGrid::scatter`] or [`SplitGrid::fill`]; stepped by
/// [`SplitGrid::run_steps`]; read back by [`SplitGrid::gather`].
pub struct SplitGrid<T: Element + DeviceRepr, P: Params> {
    stencil: Stencil<T, P>,
    split: Decomposition,
    ranks: Vec<Rank<T>>,
    exchange: Exchange,
    /// Steps the halos still cover: the split's steps per exchange after an exchange (or a
    /// scatter), fewer as steps run; at 0 the next step exchanges first.
    covered: usize,
}

/// One rank: its GPU's context, its stream, its local grid of every field, and the events that
/// order it against the exchange.
struct Rank<T> {
    device: usize,
    stream: Arc<CudaStream>,
    /// Per state field: the buffer holding the state, and the other of its ping-pong pair.
    state: Vec<CudaSlice<T>>,
    spare: Vec<CudaSlice<T>>,
    /// The device addresses of `state` and `spare`, field by field, swapped with them. Read once,
    /// when the buffers are made (a buffer never moves while it lives), not at every copy of an
    /// exchange: cudarc's `device_ptr` makes the buffer's stream wait for its last write and
    /// records a read event there at every call, two driver calls per field, sender and
    /// receiver, per copy. Those events, on the buffer's own stream, ordered nothing: the copies
    /// run on the receiver's stream, ordered by `ready` and `received` alone.
    state_addresses: Vec<u64>,
    spare_addresses: Vec<u64>,
    coefficients: Vec<CudaSlice<T>>,
    /// Recorded when an exchange starts (after all the rank's work queued before it), and after
    /// the halo copies into the rank.
    ready: CudaEvent,
    received: CudaEvent,
}

/// How halos move between ranks. One process per GPU would add NCCL's send and receive here.
enum Exchange {
    /// One process: copies between the GPUs' memories, each by a kernel on the receiving GPU
    /// ([`HaloCopier`], one per device) where that GPU maps the sender's memory (its own, or a
    /// peer's), else by `cuMemcpyPeerAsync`.
    DeviceCopies { routes: Vec<Route>, copiers: Vec<HaloCopier> },
}

/// One halo copy of an exchange and how it moves: by `copiers[k]`, the copy kernel on the
/// receiving GPU, where that GPU maps the sender's memory; by the driver's peer copy (`None`)
/// where it does not.
struct Route {
    copy: HaloCopy,
    copier: Option<usize>,
}

impl<T: Element + DeviceRepr + ValidAsZeroBits, P: Params> SplitGrid<T, P> {
    /// `stencil`'s grid split as `split` says, ranks on every visible GPU, round-robin (rank `k`
    /// on device `k % count`). Without a driver or a GPU, [`Error::NoDevice`].
    pub fn new(stencil: &Stencil<T, P>, split: Decomposition) -> Result<SplitGrid<T, P>, Error> {
        check_split(stencil, &split)?;
        cudarc_driver()?;
        let count = CudaContext::device_count().map_err(|e| Error::cudarc("counting devices (cuDeviceGetCount)", e))?;
        let devices: Vec<usize> = (0..count.max(0) as usize).collect();
        SplitGrid::on_devices(stencil, split, &devices)
    }

    /// As [`SplitGrid::new`], ranks round-robin over the devices `devices` (ordinals; rank `k`
    /// on `devices[k % devices.len()]`).
    pub fn on_devices(
        stencil: &Stencil<T, P>,
        split: Decomposition,
        devices: &[usize],
    ) -> Result<SplitGrid<T, P>, Error> {
        check_split(stencil, &split)?;
        cudarc_driver()?;
        let count = CudaContext::device_count().map_err(|e| Error::cudarc("counting devices (cuDeviceGetCount)", e))?;
        if devices.is_empty() || devices.iter().any(|&d| d >= count.max(0) as usize) {
            return Err(Error::SplitDevices { devices: devices.to_vec(), count: count.max(0) as usize });
        }
        let mut contexts: Vec<(usize, Arc<CudaContext>)> = Vec::new();
        for &device in devices.iter().take(split.ranks()) {
            if contexts.iter().all(|(d, _)| *d != device) {
                let context = CudaContext::new(device)
                    .map_err(|e| Error::cudarc(format!("cudarc's CudaContext::new({device})"), e))?;
                contexts.push((device, context));
            }
        }
        let states = stencil.output_fields() as usize;
        let coefficients = stencil.fields() as usize - states;
        let ranks = (0..split.ranks())
            .map(|rank| {
                let device = devices[rank % devices.len()];
                let context = contexts
                    .iter()
                    .find(|(d, _)| *d == device)
                    .map(|(_, c)| c)
                    .ok_or(Error::SplitDevices { devices: devices.to_vec(), count: count.max(0) as usize })?;
                Rank::new(context, device, split.local_shape(rank), states, coefficients)
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let exchange = Exchange::between(split.exchange(), &ranks, &contexts)?;
        let covered = split.steps_per_exchange();
        Ok(SplitGrid { stencil: *stencil, split, ranks, exchange, covered })
    }

    /// The split.
    pub fn decomposition(&self) -> &Decomposition {
        &self.split
    }

    /// The device ordinal each rank runs on, by rank.
    pub fn devices(&self) -> Vec<usize> {
        self.ranks.iter().map(|rank| rank.device).collect()
    }

    /// Each rank's stream, by rank: every rank's work is queued on its stream, so a caller can
    /// time it with events or order work of its own after it.
    pub fn streams(&self) -> Vec<&Arc<CudaStream>> {
        self.ranks.iter().map(|rank| &rank.stream).collect()
    }

    /// Copies `inputs`, whole grids of the split's shape (the state fields, then the coefficient
    /// fields, as for `run_steps`), into every rank's local grid, halos included.
    pub fn scatter(&mut self, inputs: &[&[T]]) -> Result<(), Error> {
        let (fields, len) = (self.stencil.fields() as usize, self.grid_len()?);
        if inputs.len() != fields {
            return Err(Error::SplitFields { stencil: self.stencil.name(), expected: fields, got: inputs.len() });
        }
        if let Some((field, input)) = inputs.iter().enumerate().find(|(_, input)| input.len() != len) {
            return Err(Error::SplitFieldLength {
                stencil: self.stencil.name(),
                field,
                shape: self.split.shape().components(),
                expected: len,
                got: input.len(),
            });
        }
        for rank in 0..self.ranks.len() {
            self.wait_for_readers(rank)?;
        }
        for (rank, band) in self.ranks.iter_mut().enumerate() {
            for (field, input) in inputs.iter().enumerate() {
                let part = self
                    .split
                    .local_part(rank, input)
                    .map_err(|source| Error::Split { stencil: self.stencil.name(), source })?;
                band.upload(field, &part)?;
            }
        }
        self.covered = self.split.steps_per_exchange();
        Ok(())
    }

    /// Sets field `field` (a state field, or a coefficient field after them) to `value` of each
    /// point's global coordinates (outermost first): each rank computes only its local grid's
    /// points on the host and copies them, so no host buffer holds the whole grid.
    pub fn fill(&mut self, field: usize, value: impl Fn(&[usize]) -> T) -> Result<(), Error> {
        let fields = self.stencil.fields() as usize;
        if field >= fields {
            return Err(Error::SplitNoField { stencil: self.stencil.name(), field, fields });
        }
        for rank in 0..self.ranks.len() {
            self.wait_for_readers(rank)?;
        }
        let inner: Vec<usize> = self.split.shape().components()[1..].to_vec();
        let (rows, row_len) = (self.split.rows(), self.split.row_len());
        for (rank, band) in self.ranks.iter_mut().enumerate() {
            let part = &self.split.bands()[rank];
            let mut local = Vec::with_capacity(part.rows() * row_len);
            let mut point = vec![0; inner.len() + 1];
            for row in 0..part.rows() {
                point[0] = part.global_row(row, rows);
                for i in 0..row_len {
                    let mut rest = i;
                    for (axis, &n) in inner.iter().enumerate().rev() {
                        point[axis + 1] = rest % n;
                        rest /= n;
                    }
                    local.push(value(&point));
                }
            }
            band.upload(field, &local)?;
        }
        Ok(())
    }

    /// `steps` time steps of the whole grid: runs of at most the split's steps per exchange on
    /// every rank, an exchange between two runs. Queued on the ranks' streams; returns once
    /// queued ([`SplitGrid::gather`] or [`SplitGrid::synchronize`] waits).
    pub fn run_steps(&mut self, steps: usize, params: P) -> Result<(), Error> {
        let mut left = steps;
        while left > 0 {
            if self.covered == 0 {
                self.exchange()?;
            }
            let now = left.min(self.covered);
            self.step_bands(now, params)?;
            left -= now;
        }
        Ok(())
    }

    /// `steps` steps (at most the split's steps per exchange) on every rank's local grid, after
    /// an [`SplitGrid::exchange`] if the halos do not cover `steps` more steps (so one exchange
    /// may serve several calls: 24 calls of one step under 24 steps per exchange). The pieces of
    /// [`SplitGrid::run_steps`], for timing them apart; [`Error::SplitSteps`] for more steps
    /// than the halo covers.
    pub fn step_bands(&mut self, steps: usize, params: P) -> Result<(), Error> {
        let most = self.split.steps_per_exchange();
        if steps > most {
            return Err(Error::SplitSteps { stencil: self.stencil.name(), steps, most, halo: self.split.halo() });
        }
        if steps == 0 {
            return Ok(());
        }
        if steps > self.covered {
            self.exchange()?;
        }
        // Steps since the last exchange: each launch computes only the rows still exact after
        // its steps (all but `done * r` at each side with a neighbour; the own rows alone at
        // the last launch before an exchange).
        let since = self.split.steps_per_exchange() - self.covered;
        for rank in 0..self.ranks.len() {
            self.wait_for_readers(rank)?;
            let band = &self.split.bands()[rank];
            let rows = |done: usize| self.split.exact_rows(band, since + done);
            let shape = self.split.local_shape(rank);
            self.ranks[rank].step(&self.stencil, shape, steps, params, &rows)?;
        }
        if self.split.ranks() > 1 {
            self.covered -= steps;
        }
        Ok(())
    }

    /// Steps the halos still cover before the next exchange: the split's steps per exchange
    /// after an exchange or a scatter, fewer by each step run since (one rank: always all).
    pub fn steps_covered(&self) -> usize {
        self.covered
    }

    /// Refreshes every halo from its neighbour's own rows, on the device.
    pub fn exchange(&mut self) -> Result<(), Error> {
        self.exchange.run(&self.ranks, self.split.row_len())?;
        self.covered = self.split.steps_per_exchange();
        Ok(())
    }

    /// Orders rank `rank`'s next work after the halo copies that read its state in the last
    /// exchange: before it writes its state (steps, `scatter`, `fill`).
    fn wait_for_readers(&self, rank: usize) -> Result<(), Error> {
        for reader in self.exchange.readers(rank) {
            self.ranks[rank].stream.wait(&self.ranks[reader].received).map_err(|e| {
                Error::cudarc(
                    format!("ordering rank {rank}'s work after rank {reader}'s halo copies (cuStreamWaitEvent)"),
                    e,
                )
            })?;
        }
        Ok(())
    }

    /// Waits until every rank's queued work is done.
    pub fn synchronize(&self) -> Result<(), Error> {
        for (rank, band) in self.ranks.iter().enumerate() {
            band.stream
                .synchronize()
                .map_err(|e| Error::cudarc(format!("waiting for rank {rank} (stream synchronize)"), e))?;
        }
        Ok(())
    }

    /// The state fields, whole grids of the split's shape: every rank's own rows, copied back.
    pub fn gather(&self) -> Result<Vec<Vec<T>>, Error> {
        let len = self.grid_len()?;
        let row_len = self.split.row_len();
        let mut outputs = vec![vec![*T::zero_ref(); len]; self.stencil.output_fields() as usize];
        for (rank, band) in self.ranks.iter().enumerate() {
            let part = &self.split.bands()[rank];
            let (own, local) = (elements(&part.own, row_len), elements(&part.own_local(), row_len));
            for (output, state) in outputs.iter_mut().zip(&band.state) {
                band.stream
                    .memcpy_dtoh(&state.slice(local.clone()), &mut output[own.clone()])
                    .map_err(|e| Error::cudarc(format!("copying rank {rank}'s {} rows back", part.own.len()), e))?;
            }
        }
        self.synchronize()?;
        Ok(outputs)
    }

    fn grid_len(&self) -> Result<usize, Error> {
        self.split.shape().len().ok_or_else(|| Error::Length {
            stencil: self.stencil.name(),
            source: rc_core::LengthError::ShapeOverflow { shape: self.split.shape() },
        })
    }
}

/// The split must be of this stencil's pattern (dimensions, boundary, radius).
fn check_split<T: Element, P: Params>(stencil: &Stencil<T, P>, split: &Decomposition) -> Result<(), Error> {
    split.fits(&stencil.pattern()).map_err(|source| Error::Split { stencil: stencil.name(), source })
}

/// Elements of rows `rows` of rows of `row_len` elements.
fn elements(rows: &Range<usize>, row_len: usize) -> Range<usize> {
    rows.start * row_len..rows.end * row_len
}

impl<T: Element + DeviceRepr + ValidAsZeroBits> Rank<T> {
    fn new(
        context: &Arc<CudaContext>,
        device: usize,
        shape: Extent,
        states: usize,
        coefficients: usize,
    ) -> Result<Rank<T>, Error> {
        let stream =
            context.new_stream().map_err(|e| Error::cudarc(format!("creating a stream on device {device}"), e))?;
        let len = shape.len().unwrap_or(0);
        let zeros = |what: &str| {
            stream.alloc_zeros::<T>(len).map_err(|e| {
                Error::cudarc(format!("allocating {len} elements of a band's {what} on device {device}"), e)
            })
        };
        let state = (0..states).map(|_| zeros("state")).collect::<Result<Vec<_>, _>>()?;
        let spare = (0..states).map(|_| zeros("state")).collect::<Result<Vec<_>, _>>()?;
        let coefficients = (0..coefficients).map(|_| zeros("coefficients")).collect::<Result<Vec<_>, _>>()?;
        let (state_addresses, spare_addresses) = (addresses(&state), addresses(&spare));
        let event =
            || context.new_event(None).map_err(|e| Error::cudarc(format!("creating an event on device {device}"), e));
        Ok(Rank {
            device,
            stream: stream.clone(),
            state,
            spare,
            state_addresses,
            spare_addresses,
            coefficients,
            ready: event()?,
            received: event()?,
        })
    }

    /// Copies `local` into field `field` (state fields first, then coefficients).
    fn upload(&mut self, field: usize, local: &[T]) -> Result<(), Error> {
        let states = self.state.len();
        let buffer = match field.checked_sub(states) {
            None => &mut self.state[field],
            Some(coefficient) => &mut self.coefficients[coefficient],
        };
        self.stream
            .memcpy_htod(local, buffer)
            .map_err(|e| Error::cudarc(format!("copying {} elements to device {}", local.len(), self.device), e))
    }

    /// `steps` steps of the local grid of shape `shape`, each launch computing rows
    /// `rows(done)`, `done` the steps done when it ends.
    fn step<P: Params>(
        &mut self,
        stencil: &Stencil<T, P>,
        shape: Extent,
        steps: usize,
        params: P,
        rows: &dyn Fn(usize) -> Range<usize>,
    ) -> Result<(), Error> {
        let mut a: Vec<&mut CudaSlice<T>> = self.state.iter_mut().collect();
        let mut b: Vec<&mut CudaSlice<T>> = self.spare.iter_mut().collect();
        let coefficients: Vec<&CudaSlice<T>> = self.coefficients.iter().collect();
        let (a, b, stream) = (&mut a, &mut b, &self.stream);
        let holds = launch_steps_cudarc_rows(stencil, stream, a, b, &coefficients, shape, steps, params, Some(rows))?;
        if holds == Holds::B {
            std::mem::swap(&mut self.state, &mut self.spare);
            std::mem::swap(&mut self.state_addresses, &mut self.spare_addresses);
        }
        Ok(())
    }
}

/// The device address of each buffer, read through cudarc's `device_ptr` on the buffer's own
/// stream (where it waits for the buffer's last write and records a read, both in that stream's
/// order: nothing another stream must wait for).
fn addresses<T>(buffers: &[CudaSlice<T>]) -> Vec<u64> {
    buffers
        .iter()
        .map(|buffer| {
            let (address, _recorded) = buffer.device_ptr(buffer.stream());
            address
        })
        .collect()
}

/// Lets device `this` read and write what the peer's stream-ordered allocations hold.
/// cudarc allocates from the device's memory pool where the device has pools, and peer access
/// (`cuCtxEnablePeerAccess`) does not reach a pool's memory: without the pool's own grant the
/// driver staged each peer copy (6 MiB of 3D halo in ~200 us, ~30 GB/s over an NVLink of
/// ~450, on two H200s: docs/gpu-runs/2026-11-28-h200x2-session16.log).
fn grant_pool_access(
    this_context: &Arc<CudaContext>,
    peer_context: &Arc<CudaContext>,
    this: usize,
    peer: usize,
) -> Result<(), Error> {
    let attribute = sys::CUdevice_attribute_enum::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED;
    let pools = peer_context
        .attribute(attribute)
        .map_err(|e| Error::cudarc(format!("asking whether device {peer} has memory pools"), e))?;
    if pools == 0 {
        return Ok(());
    }
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the device is the live peer context's.
    let code = unsafe { sys::cuDeviceGetMemPool(&mut pool, peer_context.cu_device()) };
    code.result().map_err(|e| Error::cudarc(format!("reading device {peer}'s memory pool (cuDeviceGetMemPool)"), e))?;
    let access = sys::CUmemAccessDesc {
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: this_context.cu_device(),
        },
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    // SAFETY: `pool` is the peer device's live pool, `access` one valid descriptor.
    let code = unsafe { sys::cuMemPoolSetAccess(pool, &access, 1) };
    code.result().map_err(|e| {
        Error::cudarc(format!("letting device {this} access device {peer}'s memory pool (cuMemPoolSetAccess)"), e)
    })
}

impl Exchange {
    /// The ranks whose halo copies read rank `rank`'s state.
    fn readers(&self, rank: usize) -> Vec<usize> {
        let Exchange::DeviceCopies { routes, .. } = self;
        let mut readers: Vec<usize> = Vec::new();
        for copy in routes.iter().map(|route| &route.copy).filter(|copy| copy.from == rank && copy.to != rank) {
            if !readers.contains(&copy.to) {
                readers.push(copy.to);
            }
        }
        readers
    }

    /// The exchange of `copies` between `ranks`: peer access enabled where the driver allows
    /// it, and the copy kernels loaded on every device that receives a halo it can read.
    fn between<T>(
        copies: Vec<HaloCopy>,
        ranks: &[Rank<T>],
        contexts: &[(usize, Arc<CudaContext>)],
    ) -> Result<Exchange, Error> {
        let mapped = Exchange::enable_peer_access(&copies, ranks, contexts)?;
        let (mut copiers, mut routes): (Vec<HaloCopier>, Vec<Route>) = (Vec::new(), Vec::new());
        for copy in copies {
            let (from, to) = (ranks[copy.from].device, ranks[copy.to].device);
            let reads = from == to || mapped.contains(&(to, from));
            let context = contexts.iter().find(|(d, _)| *d == to).map(|(_, context)| context);
            let copier = match (reads, context) {
                (true, Some(context)) => match copiers.iter().position(|copier| copier.device() == to) {
                    Some(k) => Some(k),
                    None => {
                        copiers.push(HaloCopier::load(context, to)?);
                        Some(copiers.len() - 1)
                    }
                },
                _ => None,
            };
            routes.push(Route { copy, copier });
        }
        Ok(Exchange::DeviceCopies { routes, copiers })
    }

    /// Lets each GPU read and write its neighbours' memory directly (NVLink or PCIe), where the
    /// driver says it can: the pairs `(this, peer)` where `this` now maps `peer`'s memory.
    /// Copies between GPUs that cannot go through the host, slower but the same bytes.
    fn enable_peer_access<T>(
        copies: &[HaloCopy],
        ranks: &[Rank<T>],
        contexts: &[(usize, Arc<CudaContext>)],
    ) -> Result<Vec<(usize, usize)>, Error> {
        let context = |device: usize| contexts.iter().find(|(d, _)| *d == device).map(|(_, c)| c);
        let mut done: Vec<(usize, usize)> = Vec::new();
        let mut mapped: Vec<(usize, usize)> = Vec::new();
        for copy in copies {
            let (from, to) = (ranks[copy.from].device, ranks[copy.to].device);
            for (this, peer) in [(from, to), (to, from)] {
                if this == peer || done.contains(&(this, peer)) {
                    continue;
                }
                done.push((this, peer));
                let (Some(this_context), Some(peer_context)) = (context(this), context(peer)) else { continue };
                let mut can = 0;
                // SAFETY: valid out-pointer; both ordinals are devices of this machine.
                let code =
                    unsafe { sys::cuDeviceCanAccessPeer(&mut can, this_context.cu_device(), peer_context.cu_device()) };
                code.result().map_err(|e| {
                    Error::cudarc(
                        format!("asking whether device {this} can access device {peer} (cuDeviceCanAccessPeer)"),
                        e,
                    )
                })?;
                if can == 0 {
                    continue;
                }
                this_context
                    .bind_to_thread()
                    .map_err(|e| Error::cudarc(format!("making device {this}'s context current"), e))?;
                // SAFETY: the peer context is alive (held in `contexts`); flags must be 0.
                let code = unsafe { sys::cuCtxEnablePeerAccess(peer_context.cu_ctx(), 0) };
                if code != sys::cudaError_enum::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
                    code.result().map_err(|e| {
                        Error::cudarc(format!("letting device {this} access device {peer} (cuCtxEnablePeerAccess)"), e)
                    })?;
                }
                grant_pool_access(this_context, peer_context, this, peer)?;
                mapped.push((this, peer));
            }
        }
        Ok(mapped)
    }

    /// Queues every halo copy on its receiving rank's stream, after everything the sending rank
    /// queued before (its `ready`), and records each rank's `received` after its copies.
    fn run<T>(&self, ranks: &[Rank<T>], row_len: usize) -> Result<(), Error> {
        let Exchange::DeviceCopies { routes, copiers } = self;
        let bytes = std::mem::size_of::<T>();
        for (rank, band) in ranks.iter().enumerate() {
            band.ready.record(&band.stream).map_err(|e| {
                Error::cudarc(format!("recording rank {rank}'s work before an exchange (cuEventRecord)"), e)
            })?;
        }
        for (rank, receiver) in ranks.iter().enumerate() {
            for Route { copy, copier } in routes.iter().filter(|route| route.copy.to == rank) {
                let sender = &ranks[copy.from];
                receiver.stream.wait(&sender.ready).map_err(|e| {
                    Error::cudarc(
                        format!("ordering rank {rank}'s halo after rank {}'s work (cuStreamWaitEvent)", copy.from),
                        e,
                    )
                })?;
                let len = copy.to_rows.len() * row_len * bytes;
                // The addresses read when the buffers were made (`Rank::state_addresses`): an
                // exchange records no event but `ready` and `received`.
                let fields = sender.state_addresses.iter().zip(&receiver.state_addresses).enumerate();
                for (field, (&from, &to)) in fields {
                    let src = from + (copy.from_rows.start * row_len * bytes) as u64;
                    let dst = to + (copy.to_rows.start * row_len * bytes) as u64;
                    let what = || {
                        format!(
                            "copying {} halo rows of field {field} from rank {} (device {}) to rank {rank} (device {})",
                            copy.to_rows.len(),
                            copy.from,
                            sender.device,
                            receiver.device
                        )
                    };
                    // SAFETY (both ways): both ranges lie inside live allocations of the two
                    // ranks (the decomposition's rows of local grids of these lengths; the
                    // addresses are those of the current `state` buffers, swapped with them),
                    // which outlive the copy (freed in their streams' order, after it: the
                    // sender's stream waits for `received` before it writes or frees). The
                    // receiver's rows are written by nothing else on its stream meanwhile. A
                    // route's copier is the receiving device's and that device maps the sender's
                    // memory (`Exchange::between`: the same device, or peer access with the
                    // pool's grant), and the stream is its context's.
                    match copier.and_then(|k| copiers.get(k)) {
                        Some(copier) => unsafe { copier.copy(&receiver.stream, src, dst, len) }
                            .map_err(|e| Error::cudarc(format!("{} (cuLaunchKernel of a copy kernel)", what()), e))?,
                        None => {
                            let code = unsafe {
                                sys::cuMemcpyPeerAsync(
                                    dst,
                                    receiver.stream.context().cu_ctx(),
                                    src,
                                    sender.stream.context().cu_ctx(),
                                    len,
                                    receiver.stream.cu_stream(),
                                )
                            };
                            code.result().map_err(|e| Error::cudarc(format!("{} (cuMemcpyPeerAsync)", what()), e))?;
                        }
                    }
                }
            }
            receiver
                .received
                .record(&receiver.stream)
                .map_err(|e| Error::cudarc(format!("recording rank {rank}'s halo copies (cuEventRecord)"), e))?;
        }
        Ok(())
    }
}

impl<T: Element + DeviceRepr, P: Params> Drop for SplitGrid<T, P> {
    /// A rank's buffers are freed in its stream's order, but other ranks' copies may still read
    /// them: everything queued finishes first. A failure cannot be acted on here.
    fn drop(&mut self) {
        for rank in &self.ranks {
            let _ = rank.stream.synchronize();
        }
    }
}
