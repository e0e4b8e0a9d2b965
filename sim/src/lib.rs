//! gpusim simulator library.
