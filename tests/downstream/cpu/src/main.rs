//! A crate depending on rc with `default-features = false`: the CPU reference and the emulation.

#[path = "../../common.rs"]
mod common;

use std::process::ExitCode;

fn main() -> ExitCode {
    match common::check_cpu(&common::input_f32(), &common::input_f64()) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            println!("FAIL (no default features): {e}");
            ExitCode::FAILURE
        }
    }
}
