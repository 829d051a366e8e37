//! Adding a run: its machine, the run with its document, its scenarios and
//! figures, in one transaction. A run already there (by its key and its
//! document's SHA-256) is left as it is, so adding twice stores once,
//! however many machines send at the same time; another document under a
//! key the store has is refused, never dropped in silence.

use super::backend::Value;
use super::rows::RunRows;
use super::{Store, StoreError};

/// What adding a run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// The run is new to the store.
    New,
    /// The store had it already (the same document); nothing changed.
    Already,
}

/// The current time in seconds since the epoch.
pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn int(v: i64) -> Value {
    Value::Int(Some(v))
}

fn text(v: &Option<String>) -> Value {
    Value::Text(v.clone())
}

impl Store {
    /// Adds `run`, unless the store has it.
    pub fn add(&mut self, run: &RunRows) -> Result<Added, StoreError> {
        self.in_transaction(|store| store.add_in_transaction(run))
    }

    fn add_in_transaction(&mut self, run: &RunRows) -> Result<Added, StoreError> {
        let machine_id = self.machine_id(run)?;
        let inserted = self.db.query(
            "INSERT INTO run (run_key, run_id, hostname, machine_id, started_unix, started, \
             kernel_release, feelbench_version, doc_schema, suite, suite_version, settings_hash, \
             series_key, comment, interrupted, scenarios, doc_sha256, doc_gz, added_unix) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19) \
             ON CONFLICT (run_key) DO NOTHING RETURNING id",
            &[
                Value::text(&run.run_key),
                Value::text(&run.run_id),
                Value::text(&run.hostname),
                int(machine_id),
                int(run.started_unix),
                Value::text(&run.started),
                Value::text(&run.kernel_release),
                text(&run.feelbench_version),
                Value::text(&run.doc_schema),
                text(&run.suite),
                Value::Int(run.suite_version),
                Value::text(&run.settings_hash),
                Value::text(&run.series_key),
                text(&run.comment),
                int(i64::from(run.interrupted)),
                int(run.scenarios.len() as i64),
                Value::text(&run.doc_sha256),
                Value::Blob(Some(run.doc_gz.clone())),
                int(now_unix()),
            ],
        )?;
        let Some(run_id) = inserted.first().and_then(|row| row[0].as_int()) else {
            return self.already(run);
        };
        for (position, scenario) in run.scenarios.iter().enumerate() {
            let rows = self.db.query(
                "INSERT INTO scenario (run_id, position, probe, load, status, measurements) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
                &[
                    int(run_id),
                    int(position as i64),
                    Value::text(&scenario.probe),
                    Value::text(&scenario.load),
                    Value::text(&scenario.status),
                    int(scenario.measurements),
                ],
            )?;
            let scenario_id = rows
                .first()
                .and_then(|row| row[0].as_int())
                .ok_or_else(|| StoreError::Failed("a scenario was added without an id".into()))?;
            for figure in &scenario.figures {
                self.db.execute(
                    "INSERT INTO figure (scenario_id, name, unit, better, headline, value, ci_low, ci_high) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    &[
                        int(scenario_id),
                        Value::text(&figure.name),
                        Value::text(&figure.unit),
                        Value::text(&figure.better),
                        int(i64::from(figure.headline)),
                        Value::Real(Some(figure.value)),
                        Value::Real(figure.ci_low),
                        Value::Real(figure.ci_high),
                    ],
                )?;
            }
        }
        Ok(Added::New)
    }

    /// `Already` when the run stored under `run`'s key has its document,
    /// else the error that says another run has the key.
    fn already(&mut self, run: &RunRows) -> Result<Added, StoreError> {
        let rows = self.db.query(
            "SELECT doc_sha256 FROM run WHERE run_key = ?1",
            &[Value::text(&run.run_key)],
        )?;
        let stored = rows.first().and_then(|row| row[0].as_text());
        match stored == Some(run.doc_sha256.as_str()) {
            true => Ok(Added::Already),
            false => Err(StoreError::KeyTaken(run.run_key.clone())),
        }
    }

    /// The id of the run's machine, added when new.
    fn machine_id(&mut self, run: &RunRows) -> Result<i64, StoreError> {
        let m = &run.machine;
        self.db.execute(
            "INSERT INTO machine (fingerprint, cpu_model, cpus, mem_gib, arch, governor, cmdline) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (fingerprint) DO NOTHING",
            &[
                Value::text(&m.fingerprint),
                text(&m.cpu_model),
                Value::Int(m.cpus),
                Value::Int(m.mem_gib),
                text(&m.arch),
                text(&m.governor),
                text(&m.cmdline),
            ],
        )?;
        let rows = self.db.query(
            "SELECT id FROM machine WHERE fingerprint = ?1",
            &[Value::text(&m.fingerprint)],
        )?;
        rows.first()
            .and_then(|row| row[0].as_int())
            .ok_or_else(|| StoreError::Failed("the machine was not added".into()))
    }
}
