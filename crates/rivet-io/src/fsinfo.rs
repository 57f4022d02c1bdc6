//! Facts about the file system the output goes to and the memory available.
