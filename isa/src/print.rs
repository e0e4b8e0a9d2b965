//! Printing IR back as PTX text.
