//! Section-level transformations between resolution and layout: which output section each input
//! section goes to and in what order (`output`), and `.eh_frame` splitting (`eh_frame`).
pub mod eh_frame;
pub mod gc;
pub mod output;
