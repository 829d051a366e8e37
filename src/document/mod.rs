//! The run document, the one source of every output: its schema, reading
//! and writing it (with the schema 1 upgrade), the method versions it
//! records, merging repeats and runs, the figures of a scenario, their
//! intervals and whether they are precise enough. It renders nothing: the
//! renderers (`crate::report`, `crate::compare`, `crate::history`) read it.

pub mod estimate;
pub mod figure;
pub mod file;
pub mod merge;
pub mod methods;
pub mod precision;
pub mod schema;
pub mod v1;

#[cfg(test)]
pub(crate) mod fixture;

#[cfg(test)]
mod tests {
    use super::fixture;

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
