//! The GPU functions of a generated stencil type, by runtime feature.
//!
//! `#[stencil]` cannot see which features of rc are enabled (and a `#[cfg(feature = ...)]` in its
//! output would test the user's crate's features), so it calls `rc::__private::gpu_methods!`,
//! and what that expands to is chosen here, where rc's features are known: each macro below is
//! defined twice, once for the feature on and once (expanding to nothing) for it off.

/// Every GPU function of a stencil type: `gpu_methods! { [u, k]; ELEMENT, DEVICE; param: Type,
/// ... }` inside its `impl`, which defines `KERNEL`, with the names of its windows (one input
/// field each) in brackets and the element type of cust buffers (`rc::runtime::DeviceElement`:
/// the element itself, `u16` for f16 and bf16); for a 2D or 3D stencil `gpu_methods! { shape
/// [usize; N]; [u, k]; ELEMENT, DEVICE; param: Type, ... }`, whose functions take the inputs'
/// shape after the buffers.
///
/// Each input buffer is an argument named as its window, in order. The names the functions give
/// their own arguments (`stream`, `output`, `shape`) are the macro's, so by `macro_rules!`
/// hygiene they never clash with a window or a stencil parameter of the same name.
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_gpu_methods {
    // First: `shape` would otherwise be taken for the window list of the 1D arm.
    (shape [usize; $n:literal]; [$($field:ident),+]; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        $crate::__rc_launch_cust! { shape [usize; $n]; [$($field),+]; $elem, $device; $($name: $ty),* }
        $crate::__rc_launch_cudarc! { shape [usize; $n]; [$($field),+]; $elem, $device; $($name: $ty),* }
        $crate::__rc_run! { shape [usize; $n]; [$($field),+]; $elem, $device; $($name: $ty),* }
    };
    ([$($field:ident),+]; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        $crate::__rc_launch_cust! { [$($field),+]; $elem, $device; $($name: $ty),* }
        $crate::__rc_launch_cudarc! { [$($field),+]; $elem, $device; $($name: $ty),* }
        $crate::__rc_run! { [$($field),+]; $elem, $device; $($name: $ty),* }
    };
}

#[cfg(feature = "cust")]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_launch_cust {
    (shape [usize; $n:literal]; [$($field:ident),+]; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        /// Launches the kernel on a cust `stream` over its input grids (one per window, in
        /// order) of shape `shape` (outermost first; contiguous, row-major, x fastest, rows
        /// packed), asynchronously. `output` must have exactly the element count of
        /// `KERNEL.output_shape(shape)`, the output grid in the same layout; see
        /// `rc::runtime::launch_grid` for every check and for when the kernel takes its vector
        /// path.
        pub fn launch(
            stream: &$crate::runtime::cust::stream::Stream,
            $($field: &$crate::runtime::cust::memory::DeviceSlice<$device>,)+
            output: &mut $crate::runtime::cust::memory::DeviceSlice<$device>,
            shape: [usize; $n],
            $($name: $ty),*
        ) -> ::std::result::Result<(), $crate::runtime::Error> {
            // The stencil's one output field, as the list of output buffers the runtime takes.
            $crate::runtime::launch_grid(&Self::KERNEL, stream, &[$($field),+], &mut [output], shape, ($($name,)*))
        }

        $crate::__rc_steps_cust! { shape [usize; $n]; [$($field),+]; $device; $($name: $ty),* }
    };
    ([$($field:ident),+]; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        /// Launches the kernel on a cust `stream` over device buffers (one input per window, in
        /// order, all of one length), asynchronously. `output` must have exactly
        /// `KERNEL.output_len(len)` elements; see `rc::runtime::launch` for every check.
        pub fn launch(
            stream: &$crate::runtime::cust::stream::Stream,
            $($field: &$crate::runtime::cust::memory::DeviceSlice<$device>,)+
            output: &mut $crate::runtime::cust::memory::DeviceSlice<$device>,
            $($name: $ty),*
        ) -> ::std::result::Result<(), $crate::runtime::Error> {
            // The stencil's one output field, as the list of output buffers the runtime takes.
            $crate::runtime::launch(&Self::KERNEL, stream, &[$($field),+], &mut [output], ($($name,)*))
        }

        $crate::__rc_steps_cust! { [$($field),+]; $device; $($name: $ty),* }
    };
}

/// The time-step functions of a stencil (cust), 1D or over grids: the first window's input steps in the
/// ping-pong buffers `a` and `b`, the others (coefficients) stay as given.
#[cfg(feature = "cust")]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_steps_cust {
    (shape [usize; $n:literal]; [$first:ident $(, $rest:ident)*]; $device:ty; $($name:ident: $ty:ty),*) => {
        /// Runs `steps` time steps on a cust `stream`, asynchronously, on the ping-pong device
        /// buffers `a` (holding the grid of the first window, of shape `shape`) and `b` (as long
        /// as `a`), as the 1D `launch_steps` does. The other windows' grids (coefficients, of
        /// `shape`) stay as given. Returns which buffer holds the result (under `valid`, its
        /// first elements: the grid with each dimension `2 * radius * steps` shorter); see
        /// `rc::runtime::launch_steps_grid` for every check.
        // One argument per window and stencil parameter, besides the buffers and the shape.
        #[allow(clippy::too_many_arguments)]
        pub fn launch_steps(
            stream: &$crate::runtime::cust::stream::Stream,
            a: &mut $crate::runtime::cust::memory::DeviceSlice<$device>,
            b: &mut $crate::runtime::cust::memory::DeviceSlice<$device>,
            $($rest: &$crate::runtime::cust::memory::DeviceSlice<$device>,)*
            shape: [usize; $n],
            steps: usize,
            $($name: $ty),*
        ) -> ::std::result::Result<$crate::runtime::Holds, $crate::runtime::Error> {
            $crate::runtime::launch_steps_grid(&Self::KERNEL, stream, a, b, &[$($rest),*], shape, steps, ($($name,)*))
        }
    };
    ([$first:ident $(, $rest:ident)*]; $device:ty; $($name:ident: $ty:ty),*) => {
        /// Runs `steps` time steps on a cust `stream`, asynchronously, on the ping-pong device
        /// buffers `a` (holding the input of the first window) and `b` (as long as `a`): launches
        /// of the fused kernel (`STEPS_PER_LAUNCH` steps each), then one launch for the steps
        /// left (fused, or the one-step kernel for one), each reading one buffer and writing the other. The other windows'
        /// inputs (coefficients, as long as `a`) stay as given. Returns which buffer holds the
        /// result (under `valid`, its first `n - 2 * radius * steps` elements); see
        /// `rc::runtime::launch_steps` for every check.
        pub fn launch_steps(
            stream: &$crate::runtime::cust::stream::Stream,
            a: &mut $crate::runtime::cust::memory::DeviceSlice<$device>,
            b: &mut $crate::runtime::cust::memory::DeviceSlice<$device>,
            $($rest: &$crate::runtime::cust::memory::DeviceSlice<$device>,)*
            steps: usize,
            $($name: $ty),*
        ) -> ::std::result::Result<$crate::runtime::Holds, $crate::runtime::Error> {
            $crate::runtime::launch_steps(&Self::KERNEL, stream, a, b, &[$($rest),*], steps, ($($name,)*))
        }

    };
}
#[cfg(not(feature = "cust"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_launch_cust {
    ($($tokens:tt)*) => {};
}

#[cfg(feature = "cudarc")]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_launch_cudarc {
    (shape [usize; $n:literal]; [$($field:ident),+]; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        /// Launches the kernel on a cudarc `stream` over its input grids (device slices or
        /// views, one per window, in order) of shape `shape` (outermost first; contiguous,
        /// row-major, x fastest, rows packed), asynchronously. `output` must have exactly the
        /// element count of `KERNEL.output_shape(shape)`, the output grid in the same layout;
        /// see `rc::runtime::launch_cudarc_grid` for every check.
        pub fn launch_cudarc<O>(
            stream: &$crate::runtime::cudarc::driver::CudaStream,
            $($field: &dyn $crate::runtime::cudarc::driver::DevicePtr<$elem>,)+
            output: &mut O,
            shape: [usize; $n],
            $($name: $ty),*
        ) -> ::std::result::Result<(), $crate::runtime::Error>
        where
            O: $crate::runtime::cudarc::driver::DevicePtrMut<$elem>,
        {
            // The stencil's one output field, as the list of output buffers the runtime takes.
            let output: &mut dyn $crate::runtime::cudarc::driver::DevicePtrMut<$elem> = output;
            $crate::runtime::launch_cudarc_grid(&Self::KERNEL, stream, &[$($field),+], &mut [output], shape, ($($name,)*))
        }

        $crate::__rc_steps_cudarc! { shape [usize; $n]; [$($field),+]; $elem; $($name: $ty),* }
    };
    ([$($field:ident),+]; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        /// Launches the kernel on a cudarc `stream` over device slices or views (one input per
        /// window, in order, all of one length), asynchronously. `output` must have exactly
        /// `KERNEL.output_len(len)` elements; see `rc::runtime::launch_cudarc` for every check.
        pub fn launch_cudarc<O>(
            stream: &$crate::runtime::cudarc::driver::CudaStream,
            $($field: &dyn $crate::runtime::cudarc::driver::DevicePtr<$elem>,)+
            output: &mut O,
            $($name: $ty),*
        ) -> ::std::result::Result<(), $crate::runtime::Error>
        where
            O: $crate::runtime::cudarc::driver::DevicePtrMut<$elem>,
        {
            // The stencil's one output field, as the list of output buffers the runtime takes.
            let output: &mut dyn $crate::runtime::cudarc::driver::DevicePtrMut<$elem> = output;
            $crate::runtime::launch_cudarc(&Self::KERNEL, stream, &[$($field),+], &mut [output], ($($name,)*))
        }

        $crate::__rc_steps_cudarc! { [$($field),+]; $elem; $($name: $ty),* }
    };
}

/// The time-step launch of a stencil on cudarc slices, 1D or over grids: the first window's input steps in
/// `a` and `b`, the others (coefficients) stay as given.
#[cfg(feature = "cudarc")]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_steps_cudarc {
    (shape [usize; $n:literal]; [$first:ident $(, $rest:ident)*]; $elem:ty; $($name:ident: $ty:ty),*) => {
        /// `launch_steps` on a cudarc `stream` and `CudaSlice`s holding grids of shape `shape`:
        /// `steps` time steps, asynchronously, ping-pong between `a` (holding the grid of the
        /// first window) and `b`; returns which holds the result. See
        /// `rc::runtime::launch_steps_cudarc_grid`.
        // One argument per window and stencil parameter, besides the buffers and the shape.
        #[allow(clippy::too_many_arguments)]
        pub fn launch_steps_cudarc(
            stream: &::std::sync::Arc<$crate::runtime::cudarc::driver::CudaStream>,
            a: &mut $crate::runtime::cudarc::driver::CudaSlice<$elem>,
            b: &mut $crate::runtime::cudarc::driver::CudaSlice<$elem>,
            $($rest: &$crate::runtime::cudarc::driver::CudaSlice<$elem>,)*
            shape: [usize; $n],
            steps: usize,
            $($name: $ty),*
        ) -> ::std::result::Result<$crate::runtime::Holds, $crate::runtime::Error> {
            $crate::runtime::launch_steps_cudarc_grid(&Self::KERNEL, stream, a, b, &[$($rest),*], shape, steps, ($($name,)*))
        }
    };
    ([$first:ident $(, $rest:ident)*]; $elem:ty; $($name:ident: $ty:ty),*) => {
        /// `launch_steps` on a cudarc `stream` and `CudaSlice`s: `steps` time steps,
        /// asynchronously, ping-pong between `a` (holding the input of the first window) and
        /// `b`; returns which holds the result. See `rc::runtime::launch_steps_cudarc`.
        pub fn launch_steps_cudarc(
            stream: &::std::sync::Arc<$crate::runtime::cudarc::driver::CudaStream>,
            a: &mut $crate::runtime::cudarc::driver::CudaSlice<$elem>,
            b: &mut $crate::runtime::cudarc::driver::CudaSlice<$elem>,
            $($rest: &$crate::runtime::cudarc::driver::CudaSlice<$elem>,)*
            steps: usize,
            $($name: $ty),*
        ) -> ::std::result::Result<$crate::runtime::Holds, $crate::runtime::Error> {
            $crate::runtime::launch_steps_cudarc(&Self::KERNEL, stream, a, b, &[$($rest),*], steps, ($($name,)*))
        }
    };
}
#[cfg(not(feature = "cudarc"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_launch_cudarc {
    ($($tokens:tt)*) => {};
}

#[cfg(any(feature = "cust", feature = "cudarc"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_run {
    (shape [usize; $n:literal]; [$($field:ident),+]; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        /// Runs the kernel on the GPU over its input grids (one per window, in order) of shape
        /// `shape` (outermost first; row-major, x fastest): copies them in, launches, waits, and
        /// returns the output grid, `KERNEL.output_shape(shape)`'s elements in the same layout
        /// (through cust when rc's `cust` feature is on, else cudarc). Without a GPU it returns
        /// an error whose `is_no_device()` is true.
        pub fn run(
            $($field: &[$elem],)+
            shape: [usize; $n],
            $($name: $ty),*
        ) -> ::std::result::Result<::std::vec::Vec<$elem>, $crate::runtime::Error> {
            $crate::runtime::run_grid(&Self::KERNEL, &[$($field),+], shape, ($($name,)*))
        }

        /// Runs `steps` time steps on the GPU from host grids (one per window, in order, of
        /// shape `shape`; the first steps, the others stay as given) and returns the final
        /// state's grid, bit for bit `run_cpu_steps`. Without a GPU it returns an error whose
        /// `is_no_device()` is true.
        pub fn run_steps(
            $($field: &[$elem],)+
            shape: [usize; $n],
            steps: usize,
            $($name: $ty),*
        ) -> ::std::result::Result<::std::vec::Vec<$elem>, $crate::runtime::Error> {
            $crate::runtime::run_steps_grid(&Self::KERNEL, &[$($field),+], shape, steps, ($($name,)*))
        }
    };
    ([$($field:ident),+]; $elem:ty, $device:ty; $($name:ident: $ty:ty),*) => {
        /// Runs the kernel on the GPU: copies the inputs (one per window, in order, all of one
        /// length) in, launches, waits, copies the output out (through cust when rc's `cust`
        /// feature is on, else cudarc). Without a GPU it returns an error whose
        /// `is_no_device()` is true.
        pub fn run($($field: &[$elem],)+ $($name: $ty),*) -> ::std::result::Result<::std::vec::Vec<$elem>, $crate::runtime::Error> {
            $crate::runtime::run(&Self::KERNEL, &[$($field),+], ($($name,)*))
        }

        /// Runs `steps` time steps on the GPU from host slices (one per window, in order, all
        /// of one length; the first steps, the others stay as given) and returns the final
        /// state, bit for bit `run_cpu_steps` (through cust when rc's `cust` feature is on, else
        /// cudarc). Without a GPU it returns an error whose `is_no_device()` is true.
        pub fn run_steps(
            $($field: &[$elem],)+
            steps: usize,
            $($name: $ty),*
        ) -> ::std::result::Result<::std::vec::Vec<$elem>, $crate::runtime::Error> {
            $crate::runtime::run_steps(&Self::KERNEL, &[$($field),+], steps, ($($name,)*))
        }
    };
}
#[cfg(not(any(feature = "cust", feature = "cudarc")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_run {
    ($($tokens:tt)*) => {};
}
