use rc::prelude::*;

// 32 warps of 8 rows at radius 2: 5 slots of 260 rows of 132 f32, more than a block may have.
#[stencil(radius = 2, outputs_per_thread = 4, rows_per_warp = 8, max_threads_per_block = 1024, distribution = planes(4))]
fn star(w: Window3<f32>) -> f32 {
    w[(-2, 0, 0)] + w[(0, -2, 0)] + w[(0, 0, 0)] + w[(0, 2, 0)] + w[(2, 0, 0)]
}

fn main() {}
