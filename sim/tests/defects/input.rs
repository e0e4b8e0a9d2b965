//! Issue 11 regressions: bad input (launch limits, argument and initialiser ranges, output
//! paths, error wording) is exit 2 with the key path before anything is simulated.
