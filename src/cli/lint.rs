//! `agentsig lint FILE`: detect a descriptor's format (or take `--format`)
//! and check its MUST rules. Exit 0 clean or warnings only, 1 errors, 2
//! unreadable input or undetectable format. `--json` prints the one report
//! shape (`agentsig.report/1`, docs/report.md) in every case.

use super::{read_input, CliError, CliResult};
use agentsig::formats::{self, Format, Severity};
use agentsig::report::Report;
use clap::Args;
use std::process::ExitCode;

#[derive(Args)]
pub struct LintArgs {
    /// The descriptor to lint (a file or an https:// URL), or - for standard input.
    pub file: String,
    /// The format, instead of detecting it: agent, agents-registry, awp,
    /// woa, agentcard, aidip, a2a, ai-catalog, mcp-server-card.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Print one JSON report (agentsig.report/1, docs/report.md) on standard output, whatever
    /// the outcome: one check per finding, with its JSON pointer.
    #[arg(long)]
    pub json: bool,
    #[cfg(feature = "net")]
    #[command(flatten)]
    pub fetch: super::args::FetchArgs,
}

pub fn run(a: LintArgs) -> CliResult {
    let input = if a.file.starts_with("https://") || a.file.starts_with("http://") {
        fetch(&a)
    } else {
        read_input(&a.file)
    };
    let (code, e) = match input.map(|i| formats::lint_bytes(&i, a.format)) {
        Ok(Ok(report)) => return Ok(print(&a, &report)),
        Err(e) => (e.kind, e),
        Ok(Err(e)) => {
            let code = match e {
                formats::DetectError::Json(_) => "json",
                formats::DetectError::NotAnObject => "not-an-object",
                _ => "format-unrecognized",
            };
            (code, CliError::malformed(format!("{}: {e}", a.file)))
        }
    };
    if !a.json {
        return Err(e);
    }
    // Under --json the report names the file; the message also goes to
    // standard error, as for every exit-2 error.
    errln!("agentsig: {}", e.message);
    super::print_report(&Report::error("lint", Some(&a.file), code, &e.message));
    Ok(ExitCode::from(e.code))
}

fn print(a: &LintArgs, report: &formats::LintReport) -> ExitCode {
    if a.json {
        super::print_report(&Report::from_lint(Some(&a.file), report));
    } else {
        let f = report.format;
        outln!(
            "{}: {} (media type {}, published at {})",
            a.file,
            f.title(),
            f.media_type(),
            f.well_known_path().unwrap_or("no fixed path")
        );
        for x in &report.findings {
            let ptr = if x.pointer.is_empty() {
                "/"
            } else {
                &x.pointer
            };
            outln!(
                "  {} {} at {}: {}",
                x.severity.as_str(),
                x.code,
                ptr,
                x.message
            );
        }
        let errors = report.errors().count();
        let warnings = report
            .findings
            .iter()
            .filter(|x| x.severity == Severity::Warning)
            .count();
        outln!("{errors} error(s), {warnings} warning(s)");
    }
    if report.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `lint URL`: fetch with the SSRF-guarded fetcher (HTTPS only, every
/// address checked), then lint the bytes received.
#[cfg(feature = "net")]
fn fetch(a: &LintArgs) -> Result<Vec<u8>, CliError> {
    let f = a.fetch.fetcher()?;
    // --deadline bounds the whole command, as for verify URL.
    let got = f
        .operation(|| f.get(&a.file))
        .map_err(|e| CliError::unreadable(format!("{}: {e}", agentsig::text::quoted(&a.file))))?;
    Ok(got.body)
}

#[cfg(not(feature = "net"))]
fn fetch(a: &LintArgs) -> Result<Vec<u8>, CliError> {
    Err(CliError::usage(format!(
        "{}: this build has no network support (feature net); download it, then lint the file",
        agentsig::text::quoted(&a.file)
    )))
}
