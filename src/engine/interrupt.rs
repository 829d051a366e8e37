//! SIGINT, SIGTERM and SIGHUP become a flag the normal path checks, so the usual
//! cleanup runs; a second signal ends the process at once (exit 130; after the
//! atomic write under way, if any, so no temporary file is left), and the
//! workers die with it (they have PR_SET_PDEATHSIG).

use crate::system::atomic;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::{flag, low_level};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Exit code after an interruption (128 + SIGINT); the one definition, which
/// the commands' exit codes use too.
pub const INTERRUPTED_EXIT_CODE: i32 = 130;

/// Whether a stop was asked for.
#[derive(Debug, Clone, Default)]
pub struct Interrupt(Arc<AtomicBool>);

/// The run was stopped by SIGINT, SIGTERM or SIGHUP.
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

impl Interrupt {
    /// Installs the handlers for SIGINT, SIGTERM and SIGHUP: the first one
    /// raises the flag; the second ends the process from its handler, at
    /// once or, if a file is being written atomically, as soon as its
    /// temporary file is gone.
    pub fn install() -> std::io::Result<Self> {
        let raised = Arc::new(AtomicBool::new(false));
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            // Order matters: this handler sees the flag set by the first signal.
            let seen = raised.clone();
            // SAFETY: sigaction through signal_hook; the handler only reads an
            // atomic and calls exit_between_writes, which is async-signal-safe.
            unsafe {
                low_level::register(signal, move || {
                    if seen.load(Ordering::SeqCst) {
                        atomic::exit_between_writes(INTERRUPTED_EXIT_CODE);
                    }
                })?;
            }
            flag::register(signal, raised.clone())?;
        }
        Ok(Self(raised))
    }

    /// `Err(Interrupted)` once a signal arrived.
    pub fn check(&self) -> Result<(), Interrupted> {
        if self.0.load(Ordering::Relaxed) {
            Err(Interrupted)
        } else {
            Ok(())
        }
    }
}
