//! The GPU check of the downstream binaries built with a runtime: `run` either matches
//! `run_cpu` bit for bit, or says there is no GPU.

use std::process::ExitCode;

use crate::common::{check_cpu, first_difference, input_f32, input_f64, smooth, weighted};

pub fn main(configuration: &str) -> ExitCode {
    let (f32_input, f64_input) = (input_f32(), input_f64());
    let (reference, reference64) = match check_cpu(&f32_input, &f64_input) {
        Ok(references) => references,
        Err(e) => {
            println!("FAIL ({configuration}): {e}");
            return ExitCode::FAILURE;
        }
    };
    let on_gpu = smooth::run(&f32_input, 0.2).and_then(|a| Ok((a, weighted::run(&f64_input, 3)?)));
    match on_gpu {
        Ok((got, got64)) => {
            let checked = first_difference("smooth on the GPU", &reference, &got, f32::to_bits)
                .and_then(|()| first_difference("weighted on the GPU", &reference64, &got64, f64::to_bits));
            match checked {
                Ok(()) => {
                    let gpu = rc::runtime::gpu().map(|g| g.to_string()).unwrap_or_else(|e| e.to_string());
                    println!(
                        "{configuration}: bit-exact on the GPU ({gpu}): smooth {} and weighted {} outputs equal run_cpu",
                        got.len(),
                        got64.len()
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    println!("FAIL ({configuration}): {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) if e.is_no_device() => {
            println!("{configuration}: no GPU: run returned: {e}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("FAIL ({configuration}): run returned: {e}");
            ExitCode::FAILURE
        }
    }
}
