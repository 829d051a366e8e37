//! The run document (the one source of every output), reading and writing it,
//! and the renderers that turn it into tables, CSV and Markdown.

pub mod csv;
pub mod estimate;
pub mod figure;
pub mod file;
pub mod markdown;
pub mod merge;
pub mod schema;
pub mod table;
pub mod v1;

#[cfg(test)]
pub(crate) mod fixture;

#[cfg(test)]
mod tests {
    use super::fixture;

    #[test]
    fn table_snapshot() {
        insta::assert_snapshot!(super::table::render(&fixture::run(), false));
    }

    #[test]
    fn markdown_snapshot() {
        insta::assert_snapshot!(super::markdown::render(&fixture::run()));
    }

    #[test]
    fn csv_snapshot() {
        insta::assert_snapshot!(super::csv::render(&fixture::run()));
    }

    #[test]
    fn run_document_round_trips_through_json() {
        let run = fixture::run();
        let text = serde_json::to_string(&run).unwrap();
        assert_eq!(
            serde_json::from_str::<super::schema::RunDocument>(&text).unwrap(),
            run
        );
        assert!(text.starts_with(r#"{"schema":"feelbench.run/2""#));
    }

    #[test]
    fn runs_without_a_repeat_count_were_measured_once() {
        let mut value = serde_json::to_value(fixture::run()).unwrap();
        value["settings"]
            .as_object_mut()
            .unwrap()
            .remove("repeats")
            .unwrap();
        let run: super::schema::RunDocument = serde_json::from_value(value).unwrap();
        assert_eq!(run.settings.repeats, 1);
    }
}
