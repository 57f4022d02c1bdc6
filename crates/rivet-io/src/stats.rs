//! I/O counters of this process: page faults (getrusage), bytes read/written (/proc/self/io).
