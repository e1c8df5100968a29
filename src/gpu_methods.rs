//! The GPU functions of a generated stencil type, by runtime feature.
//!
//! `#[stencil]` cannot see which features of rc are enabled (and a `#[cfg(feature = ...)]` in its
//! output would test the user's crate's features), so it calls `rc::__private::gpu_methods!`,
//! and what that expands to is chosen here, where rc's features are known: each macro below is
//! defined twice, once for the feature on and once (expanding to nothing) for it off.

/// Every GPU function of a stencil type: `gpu_methods! { ELEMENT; param: Type, ... }` inside its
/// `impl`, which defines `KERNEL`.
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_gpu_methods {
    (shape [usize; $n:literal]; $elem:ty; $($name:ident: $ty:ty),*) => {}; // the runtime branch fills this in
    ($elem:ty; $($name:ident: $ty:ty),*) => {
        $crate::__rc_launch_cust! { $elem; $($name: $ty),* }
        $crate::__rc_launch_cudarc! { $elem; $($name: $ty),* }
        $crate::__rc_run! { $elem; $($name: $ty),* }
    };
}

#[cfg(feature = "cust")]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_launch_cust {
    ($elem:ty; $($name:ident: $ty:ty),*) => {
        /// Launches the kernel on a cust `stream` over device buffers, asynchronously. `output`
        /// must have exactly `KERNEL.output_len(input.len())` elements; see
        /// `rc::runtime::launch` for every check.
        pub fn launch(
            stream: &$crate::runtime::cust::stream::Stream,
            input: &$crate::runtime::cust::memory::DeviceSlice<$elem>,
            output: &mut $crate::runtime::cust::memory::DeviceSlice<$elem>,
            $($name: $ty),*
        ) -> ::std::result::Result<(), $crate::runtime::Error> {
            $crate::runtime::launch(&Self::KERNEL, stream, input, output, ($($name,)*))
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
    ($elem:ty; $($name:ident: $ty:ty),*) => {
        /// Launches the kernel on a cudarc `stream` over device slices or views, asynchronously.
        /// `output` must have exactly `KERNEL.output_len(input.len())` elements; see
        /// `rc::runtime::launch_cudarc` for every check.
        pub fn launch_cudarc<I, O>(
            stream: &$crate::runtime::cudarc::driver::CudaStream,
            input: &I,
            output: &mut O,
            $($name: $ty),*
        ) -> ::std::result::Result<(), $crate::runtime::Error>
        where
            I: $crate::runtime::cudarc::driver::DevicePtr<$elem>,
            O: $crate::runtime::cudarc::driver::DevicePtrMut<$elem>,
        {
            $crate::runtime::launch_cudarc(&Self::KERNEL, stream, input, output, ($($name,)*))
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
    ($elem:ty; $($name:ident: $ty:ty),*) => {
        /// Runs the kernel on the GPU: copies `input` in, launches, waits, copies the output out
        /// (through cust when rc's `cust` feature is on, else cudarc). Without a GPU it returns
        /// an error whose `is_no_device()` is true.
        pub fn run(input: &[$elem], $($name: $ty),*) -> ::std::result::Result<::std::vec::Vec<$elem>, $crate::runtime::Error> {
            $crate::runtime::run(&Self::KERNEL, input, ($($name,)*))
        }
    };
}
#[cfg(not(any(feature = "cust", feature = "cudarc")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __rc_run {
    ($($tokens:tt)*) => {};
}
