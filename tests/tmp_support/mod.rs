//! A temporary directory for one test, removed when the guard is dropped
//! (also when the test panics), so that a test run leaves nothing in the
//! system's temporary directory.

use std::path::{Path, PathBuf};

/// `$TMPDIR/agentsig-TAG-PID`, created empty; removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    /// Create (or empty) the directory for `tag`.
    pub fn new(tag: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("agentsig-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("create a temporary directory");
        TempDir(d)
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
