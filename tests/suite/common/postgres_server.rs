//! A real PostgreSQL server for the store's tests: Debian's binaries
//! (`/usr/lib/postgresql/*/bin`), a cluster made in a temporary directory
//! as a user other than root (`nobody` when the tests run as root), on
//! 127.0.0.1 only and a free port (no unix socket), with password login
//! for a test role. Dropping it stops the server and removes the cluster,
//! also when a test fails.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The test role, the cluster's superuser.
pub const ROLE: &str = "feelbench_test";
/// Its password: no output of feelbench may ever show it.
pub const PASSWORD: &str = "pw-Quokka-7f3a9c";
/// The user id the server runs as when the tests run as root.
const NOBODY: u32 = 65534;

/// A running test server.
pub struct Server {
    bin: PathBuf,
    dir: tempfile::TempDir,
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
    running: bool,
}

/// The directory of the newest PostgreSQL binaries installed, with
/// `initdb`, `pg_ctl` and `postgres`.
fn binaries() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            ["initdb", "pg_ctl", "postgres"]
                .iter()
                .all(|b| bin.join(b).is_file())
                .then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Server {
    /// Starts a server; `None` (the test says it is skipped) when
    /// PostgreSQL is not installed. With `tls`, the server has a
    /// self-signed certificate and takes connections over TLS only.
    pub fn start(tls: bool) -> Option<Server> {
        let Some(bin) = binaries() else {
            super::skip("PostgreSQL is not installed (apt-get install postgresql; .ci/run does)");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let pwfile = dir.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        let mut server = Server {
            bin,
            dir,
            port: free_port(),
            running: false,
        };
        server.hand_over(server.dir.path());
        server.hand_over(&pwfile);
        let data = server.data();
        server.tool(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-U".as_ref(),
                ROLE.as_ref(),
                "--pwfile".as_ref(),
                pwfile.as_os_str(),
                "--auth-local=trust".as_ref(),
                "--auth-host=scram-sha-256".as_ref(),
                "--no-locale".as_ref(),
                "-E".as_ref(),
                "UTF8".as_ref(),
                "--no-sync".as_ref(),
            ],
        );
        let mut conf = String::from(
            "listen_addresses = '127.0.0.1'\nunix_socket_directories = ''\nfsync = off\n\
             synchronous_commit = off\nfull_page_writes = off\nmax_connections = 40\n\
             shared_buffers = 16MB\n",
        );
        if tls {
            server.make_certificate();
            conf.push_str("ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n");
            let hba = "hostssl all all 127.0.0.1/32 scram-sha-256\n";
            std::fs::write(data.join("pg_hba.conf"), hba).unwrap();
        }
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(data.join("postgresql.conf"))
            .unwrap();
        std::io::Write::write_all(&mut file, conf.as_bytes()).unwrap();
        for _ in 0..3 {
            if server.try_start() {
                return Some(server);
            }
            // Another process took the port meanwhile.
            server.port = free_port();
        }
        panic!(
            "the test server did not start: {}",
            std::fs::read_to_string(server.dir.path().join("log")).unwrap_or_default()
        );
    }

    /// The cluster's data directory.
    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Makes `path` the server user's.
    fn hand_over(&self, path: &Path) {
        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY)).unwrap();
        }
    }

    /// `tool ARGS` of the PostgreSQL binaries, as the server's user.
    fn tool(&self, tool: &str, args: &[&std::ffi::OsStr]) -> Output {
        let mut command = Command::new(self.bin.join(tool));
        command
            .args(args)
            .current_dir(self.dir.path())
            .env_remove("PGPASSWORD")
            .env("LC_ALL", "C");
        if nix::unistd::geteuid().is_root() {
            command.uid(NOBODY).gid(NOBODY).env("HOME", self.dir.path());
        }
        let output = command.output().unwrap();
        assert!(
            tool == "pg_ctl" || output.status.success(),
            "{tool} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// The server's certificate and key in the data directory, signed by
    /// a certificate authority of the test's ([`Server::root_certificate`]),
    /// for the name `localhost` only (not 127.0.0.1, so that checking the
    /// host name can fail).
    fn make_certificate(&self) {
        let data = self.data();
        let root = certificate_authority(self.dir.path(), "root");
        openssl(
            &data,
            &[
                "req",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-subj",
                "/CN=localhost",
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
            ],
        );
        let extensions = data.join("server.ext");
        std::fs::write(
            &extensions,
            "basicConstraints = critical,CA:FALSE\nkeyUsage = critical,digitalSignature\n\
             extendedKeyUsage = serverAuth\nsubjectAltName = DNS:localhost\n",
        )
        .unwrap();
        let (ca_cert, ca_key) = (root.to_str().unwrap(), self.dir.path().join("root.key"));
        openssl(
            &data,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                ca_cert,
                "-CAkey",
                ca_key.to_str().unwrap(),
                "-CAcreateserial",
                "-days",
                "1",
                "-out",
                "server.crt",
                "-extfile",
                extensions.to_str().unwrap(),
            ],
        );
        for file in ["server.key", "server.crt"] {
            let path = data.join(file);
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                .unwrap();
            self.hand_over(&path);
        }
    }

    /// The root certificate the server's certificate (with `tls`) is
    /// signed by.
    pub fn root_certificate(&self) -> PathBuf {
        self.dir.path().join("root.crt")
    }

    /// Starts the server on its port; false when it did not come up.
    fn try_start(&mut self) -> bool {
        let data = self.data();
        let log = self.dir.path().join("log");
        let port = format!("-p {}", self.port);
        let output = self.tool(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-l".as_ref(),
                log.as_os_str(),
                "-o".as_ref(),
                port.as_ref(),
                "-w".as_ref(),
                "-t".as_ref(),
                "60".as_ref(),
                "start".as_ref(),
            ],
        );
        self.running = output.status.success();
        self.running
    }

    /// Starts the server again, on the same port, after [`Server::stop`].
    pub fn restart(&mut self) {
        assert!(self.try_start(), "the test server did not start again");
    }

    /// Stops the server (the cluster stays).
    pub fn stop(&mut self) {
        if self.running {
            let data = self.data();
            self.tool(
                "pg_ctl",
                &[
                    "-D".as_ref(),
                    data.as_os_str(),
                    "-m".as_ref(),
                    "immediate".as_ref(),
                    "-w".as_ref(),
                    "stop".as_ref(),
                ],
            );
            self.running = false;
        }
    }

    /// The URL of its `postgres` database, with the test role's password.
    pub fn url(&self) -> String {
        format!(
            "postgres://{ROLE}:{PASSWORD}@127.0.0.1:{}/postgres",
            self.port
        )
    }

    /// The URL without a password (for the environment or a password file
    /// to complete).
    pub fn url_without_password(&self) -> String {
        format!("postgres://{ROLE}@127.0.0.1:{}/postgres", self.port)
    }

    /// The one value `sql` selects, through `psql` over TCP.
    pub fn psql(&self, sql: &str) -> String {
        let output = Command::new(self.bin.join("psql"))
            .args([
                "-X",
                "-A",
                "-t",
                "-h",
                "127.0.0.1",
                "-U",
                ROLE,
                "-d",
                "postgres",
            ])
            .args(["-p", &self.port.to_string(), "-c", sql])
            .env("PGPASSWORD", PASSWORD)
            .env("PGSSLMODE", "prefer")
            .output()
            .unwrap();
        assert!(output.status.success(), "psql: {output:?}");
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A certificate authority made in `dir`: `NAME.crt` (returned) and its key
/// `NAME.key`.
pub fn certificate_authority(dir: &Path, name: &str) -> PathBuf {
    let config = dir.join(format!("{name}.cnf"));
    std::fs::write(
        &config,
        format!(
            "[req]\ndistinguished_name = dn\nx509_extensions = ca\nprompt = no\n\
             [dn]\nCN = feelbench test authority {name}\n\
             [ca]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\n\
             subjectKeyIdentifier = hash\n"
        ),
    )
    .unwrap();
    let (cert, key) = (format!("{name}.crt"), format!("{name}.key"));
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
            "-config",
            config.to_str().unwrap(),
            "-keyout",
            &key,
            "-out",
            &cert,
        ],
    );
    dir.join(cert)
}

/// `openssl ARGS` in `dir`, which must succeed.
fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl is not installed");
    assert!(output.status.success(), "openssl {args:?}: {output:?}");
}
