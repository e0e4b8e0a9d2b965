//! Issue 11 regressions: the machine (scoreboard dependences, scheduler choices, fault
//! reports, outputs written up to a fault).
