//! The GPU functions of a generated stencil type, by runtime feature.
//!
//! `#[stencil]` cannot see which features of rc are enabled (and a `#[cfg(feature = ...)]` in its
//! output would test the user's crate's features), so it calls `rc::__private::gpu_methods!`,
//! and what that expands to is chosen here, where rc's features are known: each macro below is
//! defined twice, once for the feature on and once (expanding to nothing) for it off.

/// Every one-step GPU function of a stencil type: `gpu_methods! { [u, k] -> [output]: RET =
/// FIELDS; ELEMENT, DEVICE; param: Type, ... }` inside its `impl`, which defines `KERNEL`, with
/// the names of its windows (one input field each) in brackets, then the names of its output
/// buffers (one per output field), what `run` returns (`Vec<T>`, `(Vec<T>, Vec<T>)` or `[Vec<T>;
/// N]`, as the function returns its elements) and a closure making that of the runtime's one
/// `Vec` per output field, and the element type of cust buffers (`rc::runtime::DeviceElement`:
/// the element itself, `u16` for f16 and bf16); for a 2D or 3D stencil `gpu_methods! { shape
/// [usize; N]; ... }`, whose functions take the inputs' shape after the buffers. The time-step
/// functions are [`__rc_gpu_steps`]'s.
///
/// Each input buffer is an argument named as its window, in order. The names the functions give
/// their own arguments (`stream`, `shape`) are the macro's, so by `macro_rules!` hygiene they
/// never clash with a window or a stencil parameter of the same name.
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_gpu_methods {
    // First: `shape` would otherwise be taken for the window list of the 1D arm.
    (shape [usize; $n:literal]; [$($field:ident),+] -> [$($out:ident),+]: $ret:ty = $fields:expr; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        $crate::__rc_launch_cust! { shape [usize; $n]; [$($field),+] -> [$($out),+]; $elem, $device; $($name: $ty),* }
        $crate::__rc_launch_cudarc! { shape [usize; $n]; [$($field),+] -> [$($out),+]; $elem, $device; $($name: $ty),* }
        $crate::__rc_run! { shape [usize; $n]; [$($field),+]: $ret = $fields; $elem, $device; $($name: $ty),* }
    };
    ([$($field:ident),+] -> [$($out:ident),+]: $ret:ty = $fields:expr; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        $crate::__rc_launch_cust! { [$($field),+] -> [$($out),+]; $elem, $device; $($name: $ty),* }
        $crate::__rc_launch_cudarc! { [$($field),+] -> [$($out),+]; $elem, $device; $($name: $ty),* }
        $crate::__rc_run! { [$($field),+]: $ret = $fields; $elem, $device; $($name: $ty),* }
    };
}

/// The time-step GPU functions of a stencil type: `gpu_steps! { [(a, b)] [k]; [u, k]: RET =
/// FIELDS; ELEMENT, DEVICE; param: Type, ... }` (with `shape [usize; N];` first in 2D and 3D):
/// the names of each state field's pair of buffers, those of the coefficient windows' buffers,
/// the windows, and what `run_steps` returns made by the closure, as for
/// [`__rc_gpu_methods`]'s `run`: `launch_steps` (cust), `launch_steps_cudarc` and `run_steps`.
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_gpu_steps {
    (shape [usize; $n:literal]; [$(($a:ident, $b:ident)),+] [$($coefficient:ident),*]; [$($field:ident),+]: $ret:ty = $fields:expr; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        $crate::__rc_steps_cust! { shape [usize; $n]; [$(($a, $b)),+] [$($coefficient),*]; $device; $($name: $ty),* }
        $crate::__rc_steps_cudarc! { shape [usize; $n]; [$(($a, $b)),+] [$($coefficient),*]; $elem; $($name: $ty),* }
        $crate::__rc_run_steps! { shape [usize; $n]; [$($field),+]: $ret = $fields; $elem; $($name: $ty),* }
    };
    ([$(($a:ident, $b:ident)),+] [$($coefficient:ident),*]; [$($field:ident),+]: $ret:ty = $fields:expr; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        $crate::__rc_steps_cust! { [$(($a, $b)),+] [$($coefficient),*]; $device; $($name: $ty),* }
        $crate::__rc_steps_cudarc! { [$(($a, $b)),+] [$($coefficient),*]; $elem; $($name: $ty),* }
        $crate::__rc_run_steps! { [$($field),+]: $ret = $fields; $elem; $($name: $ty),* }
    };
}

#[cfg(feature = "cust")]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_launch_cust {
    (shape [usize; $n:literal]; [$($field:ident),+] -> [$($out:ident),+]; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        /// Launches the kernel on a cust `stream` over its input grids (one per window, in
        /// order) of shape `shape` (outermost first; contiguous, row-major, x fastest, rows
        /// packed), asynchronously. Each output buffer (one per element the function returns,
        /// in order) must have exactly the element count of `KERNEL.output_shape(shape)`, the
        /// output grid in the same layout; see `rc::runtime::launch_grid` for every check and
        /// for when the kernel takes its vector path.
        // One argument per window, output and stencil parameter, besides the stream and shape.
        #[allow(clippy::too_many_arguments)]
        pub fn launch(
            stream: &$crate::runtime::cust::stream::Stream,
            $($field: &$crate::runtime::cust::memory::DeviceSlice<$device>,)+
            $($out: &mut $crate::runtime::cust::memory::DeviceSlice<$device>,)+
            shape: [usize; $n],
            $($name: $ty),*
        ) -> ::std::result::Result<(), $crate::runtime::Error> {
            $crate::runtime::launch_grid(&Self::KERNEL, stream, &[$($field),+], &mut [$($out),+], shape, ($($name,)*))
        }
    };
    ([$($field:ident),+] -> [$($out:ident),+]; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        /// Launches the kernel on a cust `stream` over device buffers (one input per window, in
        /// order, all of one length), asynchronously. Each output buffer (one per element the
        /// function returns, in order) must have exactly `KERNEL.output_len(len)` elements; see
        /// `rc::runtime::launch` for every check.
        // One argument per window, output and stencil parameter, besides the stream.
        #[allow(clippy::too_many_arguments)]
        pub fn launch(
            stream: &$crate::runtime::cust::stream::Stream,
            $($field: &$crate::runtime::cust::memory::DeviceSlice<$device>,)+
            $($out: &mut $crate::runtime::cust::memory::DeviceSlice<$device>,)+
            $($name: $ty),*
        ) -> ::std::result::Result<(), $crate::runtime::Error> {
            $crate::runtime::launch(&Self::KERNEL, stream, &[$($field),+], &mut [$($out),+], ($($name,)*))
        }
    };
}

/// The time-step functions of a stencil (cust), 1D or over grids: each state window's input
/// steps in its pair of ping-pong buffers (`a` and `b` with one state field; `a0`, `b0`, `a1`,
/// ... with several), the other windows (coefficients) stay as given.
#[cfg(feature = "cust")]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_steps_cust {
    (shape [usize; $n:literal]; [$(($a:ident, $b:ident)),+] [$($coefficient:ident),*]; $device:ty; $($name:ident: $ty:ty),*) => {
        /// Runs `steps` time steps on a cust `stream`, asynchronously, on ping-pong device
        /// buffers, a pair per state field (the first windows, one per element the function
        /// returns; each output the next state of the window of its number): the first of each
        /// pair holding the window's grid, of shape `shape`, the second as long, as the 1D
        /// `launch_steps` does. The other windows' grids (coefficients, of `shape`) stay as
        /// given. Returns which buffers hold the result (under `valid`, their first elements: the
        /// grid with each dimension `2 * radius * steps` shorter); see
        /// `rc::runtime::launch_steps_grid` for every check.
        // One argument per buffer, window and stencil parameter, besides the stream and the shape.
        #[allow(clippy::too_many_arguments)]
        pub fn launch_steps(
            stream: &$crate::runtime::cust::stream::Stream,
            $($a: &mut $crate::runtime::cust::memory::DeviceSlice<$device>, $b: &mut $crate::runtime::cust::memory::DeviceSlice<$device>,)+
            $($coefficient: &$crate::runtime::cust::memory::DeviceSlice<$device>,)*
            shape: [usize; $n],
            steps: usize,
            $($name: $ty),*
        ) -> ::std::result::Result<$crate::runtime::Holds, $crate::runtime::Error> {
            $crate::runtime::launch_steps_grid(&Self::KERNEL, stream, &mut [$($a),+], &mut [$($b),+], &[$($coefficient),*], shape, steps, ($($name,)*))
        }
    };
    ([$(($a:ident, $b:ident)),+] [$($coefficient:ident),*]; $device:ty; $($name:ident: $ty:ty),*) => {
        /// Runs `steps` time steps on a cust `stream`, asynchronously, on ping-pong device
        /// buffers, a pair per state field (the first windows, one per element the function
        /// returns; each output the next state of the window of its number): the first of each
        /// pair holding the window's input, the second as long. Launches of the fused kernel
        /// (`STEPS_PER_LAUNCH` steps each), then one launch for the steps left (fused, or the
        /// one-step kernel for one), each reading one buffer of each pair and writing the
        /// other. The other windows' inputs (coefficients, as long) stay as given. Returns which
        /// buffers hold the result (under `valid`, their first `n - 2 * radius * steps`
        /// elements); see `rc::runtime::launch_steps` for every check.
        // One argument per buffer, window and stencil parameter, besides the stream.
        #[allow(clippy::too_many_arguments)]
        pub fn launch_steps(
            stream: &$crate::runtime::cust::stream::Stream,
            $($a: &mut $crate::runtime::cust::memory::DeviceSlice<$device>, $b: &mut $crate::runtime::cust::memory::DeviceSlice<$device>,)+
            $($coefficient: &$crate::runtime::cust::memory::DeviceSlice<$device>,)*
            steps: usize,
            $($name: $ty),*
        ) -> ::std::result::Result<$crate::runtime::Holds, $crate::runtime::Error> {
            $crate::runtime::launch_steps(&Self::KERNEL, stream, &mut [$($a),+], &mut [$($b),+], &[$($coefficient),*], steps, ($($name,)*))
        }
    };
}
#[cfg(not(feature = "cust"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_launch_cust {
    ($($tokens:tt)*) => {};
}
#[cfg(not(feature = "cust"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_steps_cust {
    ($($tokens:tt)*) => {};
}

#[cfg(feature = "cudarc")]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_launch_cudarc {
    (shape [usize; $n:literal]; [$($field:ident),+] -> [$($out:ident),+]; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        /// Launches the kernel on a cudarc `stream` over its input grids (device slices or
        /// views, one per window, in order) of shape `shape` (outermost first; contiguous,
        /// row-major, x fastest, rows packed), asynchronously. Each output (a device slice or
        /// view, one per element the function returns, in order) must have exactly the element
        /// count of `KERNEL.output_shape(shape)`, the output grid in the same layout; see
        /// `rc::runtime::launch_cudarc_grid` for every check.
        // One argument per window, output and stencil parameter, besides the stream and shape.
        #[allow(clippy::too_many_arguments)]
        pub fn launch_cudarc(
            stream: &::std::sync::Arc<$crate::runtime::cudarc::driver::CudaStream>,
            $($field: &dyn $crate::runtime::cudarc::driver::DevicePtr<$elem>,)+
            $($out: &mut dyn $crate::runtime::cudarc::driver::DevicePtrMut<$elem>,)+
            shape: [usize; $n],
            $($name: $ty),*
        ) -> ::std::result::Result<(), $crate::runtime::Error> {
            $crate::runtime::launch_cudarc_grid(&Self::KERNEL, stream, &[$($field),+], &mut [$($out),+], shape, ($($name,)*))
        }
    };
    ([$($field:ident),+] -> [$($out:ident),+]; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        /// Launches the kernel on a cudarc `stream` over device slices or views (one input per
        /// window, in order, all of one length), asynchronously. Each output (one per element
        /// the function returns, in order) must have exactly `KERNEL.output_len(len)` elements;
        /// see `rc::runtime::launch_cudarc` for every check.
        // One argument per window, output and stencil parameter, besides the stream.
        #[allow(clippy::too_many_arguments)]
        pub fn launch_cudarc(
            stream: &::std::sync::Arc<$crate::runtime::cudarc::driver::CudaStream>,
            $($field: &dyn $crate::runtime::cudarc::driver::DevicePtr<$elem>,)+
            $($out: &mut dyn $crate::runtime::cudarc::driver::DevicePtrMut<$elem>,)+
            $($name: $ty),*
        ) -> ::std::result::Result<(), $crate::runtime::Error> {
            $crate::runtime::launch_cudarc(&Self::KERNEL, stream, &[$($field),+], &mut [$($out),+], ($($name,)*))
        }
    };
}

/// The time-step launch of a stencil on cudarc slices, 1D or over grids: each state window's
/// input steps in its pair of buffers, the other windows (coefficients) stay as given.
#[cfg(feature = "cudarc")]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_steps_cudarc {
    (shape [usize; $n:literal]; [$(($a:ident, $b:ident)),+] [$($coefficient:ident),*]; $elem:ty; $($name:ident: $ty:ty),*) => {
        /// `launch_steps` on a cudarc `stream` and `CudaSlice`s holding grids of shape `shape`:
        /// `steps` time steps, asynchronously, ping-pong within each state field's pair of
        /// buffers (the first holding the window's grid); returns which hold the result. See
        /// `rc::runtime::launch_steps_cudarc_grid`.
        // One argument per buffer, window and stencil parameter, besides the stream and the shape.
        #[allow(clippy::too_many_arguments)]
        pub fn launch_steps_cudarc(
            stream: &::std::sync::Arc<$crate::runtime::cudarc::driver::CudaStream>,
            $($a: &mut $crate::runtime::cudarc::driver::CudaSlice<$elem>, $b: &mut $crate::runtime::cudarc::driver::CudaSlice<$elem>,)+
            $($coefficient: &$crate::runtime::cudarc::driver::CudaSlice<$elem>,)*
            shape: [usize; $n],
            steps: usize,
            $($name: $ty),*
        ) -> ::std::result::Result<$crate::runtime::Holds, $crate::runtime::Error> {
            $crate::runtime::launch_steps_cudarc_grid(&Self::KERNEL, stream, &mut [$($a),+], &mut [$($b),+], &[$($coefficient),*], shape, steps, ($($name,)*))
        }
    };
    ([$(($a:ident, $b:ident)),+] [$($coefficient:ident),*]; $elem:ty; $($name:ident: $ty:ty),*) => {
        /// `launch_steps` on a cudarc `stream` and `CudaSlice`s: `steps` time steps,
        /// asynchronously, ping-pong within each state field's pair of buffers (the first
        /// holding the window's input); returns which hold the result. See
        /// `rc::runtime::launch_steps_cudarc`.
        // One argument per buffer, window and stencil parameter, besides the stream.
        #[allow(clippy::too_many_arguments)]
        pub fn launch_steps_cudarc(
            stream: &::std::sync::Arc<$crate::runtime::cudarc::driver::CudaStream>,
            $($a: &mut $crate::runtime::cudarc::driver::CudaSlice<$elem>, $b: &mut $crate::runtime::cudarc::driver::CudaSlice<$elem>,)+
            $($coefficient: &$crate::runtime::cudarc::driver::CudaSlice<$elem>,)*
            steps: usize,
            $($name: $ty),*
        ) -> ::std::result::Result<$crate::runtime::Holds, $crate::runtime::Error> {
            $crate::runtime::launch_steps_cudarc(&Self::KERNEL, stream, &mut [$($a),+], &mut [$($b),+], &[$($coefficient),*], steps, ($($name,)*))
        }
    };
}
#[cfg(not(feature = "cudarc"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_launch_cudarc {
    ($($tokens:tt)*) => {};
}
#[cfg(not(feature = "cudarc"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_steps_cudarc {
    ($($tokens:tt)*) => {};
}

#[cfg(any(feature = "cust", feature = "cudarc"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_run {
    (shape [usize; $n:literal]; [$($field:ident),+]: $ret:ty = $fields:expr; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        /// Runs the kernel on the GPU over its input grids (one per window, in order) of shape
        /// `shape` (outermost first; row-major, x fastest): copies them in, launches, waits, and
        /// returns the output grids as the function returns its elements (a `Vec` for each),
        /// each `KERNEL.output_shape(shape)`'s elements in the same layout (through cust when
        /// rc's `cust` feature is on, else cudarc). Without a GPU it returns an error whose
        /// `is_no_device()` is true.
        // One argument per window and parameter, besides the shape and steps.
        #[allow(clippy::too_many_arguments)]
        pub fn run(
            $($field: &[$elem],)+
            shape: [usize; $n],
            $($name: $ty),*
        ) -> ::std::result::Result<$ret, $crate::runtime::Error> {
            ($fields)($crate::runtime::run_grid(&Self::KERNEL, &[$($field),+], shape, ($($name,)*))?)
        }
    };
    ([$($field:ident),+]: $ret:ty = $fields:expr; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        /// Runs the kernel on the GPU: copies the inputs (one per window, in order, all of one
        /// length) in, launches, waits, copies the outputs out, returned as the function
        /// returns its elements (a `Vec` for each; through cust when rc's `cust` feature is on,
        /// else cudarc). Without a GPU it returns an error whose `is_no_device()` is true.
        // One argument per window and parameter, besides the shape and steps.
        #[allow(clippy::too_many_arguments)]
        pub fn run($($field: &[$elem],)+ $($name: $ty),*) -> ::std::result::Result<$ret, $crate::runtime::Error> {
            ($fields)($crate::runtime::run(&Self::KERNEL, &[$($field),+], ($($name,)*))?)
        }
    };
}
#[cfg(not(any(feature = "cust", feature = "cudarc")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_run {
    ($($tokens:tt)*) => {};
}

#[cfg(any(feature = "cust", feature = "cudarc"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_run_steps {
    (shape [usize; $n:literal]; [$($field:ident),+]: $ret:ty = $fields:expr; $elem:ty; $($name:ident: $ty:ty),*) => {
        /// Runs `steps` time steps on the GPU from host grids (one per window, in order, of
        /// shape `shape`; the state windows step, the others stay as given) and returns the
        /// final state's grids as the function returns its elements, bit for bit
        /// `run_cpu_steps`. Without a GPU it returns an error whose `is_no_device()` is true.
        // One argument per window and parameter, besides the shape and steps.
        #[allow(clippy::too_many_arguments)]
        pub fn run_steps(
            $($field: &[$elem],)+
            shape: [usize; $n],
            steps: usize,
            $($name: $ty),*
        ) -> ::std::result::Result<$ret, $crate::runtime::Error> {
            ($fields)($crate::runtime::run_steps_grid(&Self::KERNEL, &[$($field),+], shape, steps, ($($name,)*))?)
        }
    };
    ([$($field:ident),+]: $ret:ty = $fields:expr; $elem:ty; $($name:ident: $ty:ty),*) => {
        /// Runs `steps` time steps on the GPU from host slices (one per window, in order, all
        /// of one length; the state windows step, the others stay as given) and returns the
        /// final state as the function returns its elements, bit for bit `run_cpu_steps`
        /// (through cust when rc's `cust` feature is on, else cudarc). Without a GPU it returns
        /// an error whose `is_no_device()` is true.
        // One argument per window and parameter, besides the shape and steps.
        #[allow(clippy::too_many_arguments)]
        pub fn run_steps(
            $($field: &[$elem],)+
            steps: usize,
            $($name: $ty),*
        ) -> ::std::result::Result<$ret, $crate::runtime::Error> {
            ($fields)($crate::runtime::run_steps(&Self::KERNEL, &[$($field),+], steps, ($($name,)*))?)
        }
    };
}
#[cfg(not(any(feature = "cust", feature = "cudarc")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_run_steps {
    ($($tokens:tt)*) => {};
}
