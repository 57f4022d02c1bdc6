//! Section-level transformations between resolution and layout: which output section each input
//! section goes to and in what order (`output`, reordered on request by `order`), `.eh_frame` splitting (`eh_frame`) and merging of
//! `SHF_MERGE` strings and constants (`merge`).
pub mod compress;
pub mod eh_frame;
pub mod frames;
pub mod gc;
pub mod icf;
pub mod merge;
pub mod merged;
pub mod offsets;
pub mod order;
pub mod output;
pub mod thunks;
pub mod why_live;
