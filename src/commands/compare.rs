//! `feelbench compare BASE.json OTHER.json ...`: reads the runs, compares
//! them against the first and renders the comparison in the chosen format.

use crate::cli::{CompareArgs, Format};
use crate::compare::{column_names, csv, markdown, text, Comparison};
use crate::probe;
use crate::report::file::read_run;

/// The comparison of the runs named in `args`, rendered.
pub fn render(args: &CompareArgs) -> anyhow::Result<String> {
    let options = args.options()?;
    let runs = args
        .files
        .iter()
        .map(|path| read_run(path, &probe::sheet_of))
        .collect::<Result<Vec<_>, _>>()?;
    let names = column_names(&runs, &args.names);
    let files = args.files.iter().map(|p| p.display().to_string()).collect();
    let comparison = Comparison::build(&runs, names, files, &options);
    Ok(match args.format {
        Format::Table => text::render(&comparison, args.layout.into()),
        Format::Md => markdown::render(&comparison, args.layout.into()),
        Format::Csv => csv::render(&comparison),
        Format::Json => {
            serde_json::to_string_pretty(&comparison).expect("a comparison always serialises")
                + "\n"
        }
    })
}
