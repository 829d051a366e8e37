//! TLS to a PostgreSQL server, with rustls over ring (pure Rust and a
//! little C that gcc builds: no OpenSSL headers on the machine), checking
//! the server as libpq's `sslmode` says: `verify-full` checks the
//! certificate's chain up to a root certificate the user gives and that it
//! names the host connected to, `verify-ca` the chain only; `require` and
//! `prefer` encrypt without checking, unless a root certificate file is
//! there, when libpq checks the chain (as `verify-ca`) and so does this.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_cert_signed_by_trust_anchor, verify_server_name};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::Path;
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode`: whether TLS is used and what it checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// TLS when the server offers it (libpq tries without first; here the
    /// same as `Prefer`).
    Allow,
    /// TLS when the server offers it: libpq's default.
    Prefer,
    /// TLS or no connection.
    Require,
    /// TLS with the server's certificate chain checked.
    VerifyCa,
    /// TLS with the chain and the host name checked.
    VerifyFull,
}

impl SslMode {
    /// The mode `text` names, as libpq spells it; `None` for another word.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "disable" => Self::Disable,
            "allow" => Self::Allow,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            _ => return None,
        })
    }

    /// Whether the mode checks the server's certificate whatever else.
    pub fn verifies(self) -> bool {
        matches!(self, Self::VerifyCa | Self::VerifyFull)
    }

    /// The modes in words, for a message.
    pub const CHOICES: &str = "disable, allow, prefer, require, verify-ca or verify-full";
}

/// What is checked of the server's certificate.
#[derive(Debug, Clone)]
pub enum Check {
    /// Nothing: the connection is encrypted, the server not authenticated.
    Nothing,
    /// Its chain up to one of these roots.
    Chain(Arc<RootCertStore>),
    /// Its chain, and that it names the host connected to.
    ChainAndName(Arc<RootCertStore>),
}

/// The root certificates in the PEM file at `path` (libpq's
/// `sslrootcert`): every certificate in it.
pub fn root_certificates(path: &Path) -> Result<RootCertStore, String> {
    let said = |what: String| format!("root certificate file {}: {what}", path.display());
    let pem = std::fs::read(path).map_err(|e| said(e.to_string()))?;
    let certificates = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| said(format!("not PEM ({e})")))?;
    if certificates.is_empty() {
        return Err(said("holds no certificate".to_string()));
    }
    let mut roots = RootCertStore::empty();
    for certificate in certificates {
        roots
            .add(certificate)
            .map_err(|e| said(format!("a certificate that cannot be used ({e})")))?;
    }
    Ok(roots)
}

/// The connector `postgres` uses when the connection is encrypted,
/// checking the server's certificate as `check` says.
pub fn connector(check: Check) -> Result<MakeRustlsConnect, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Verifier { provider, check }))
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// Checks the server's certificate as libpq's mode says, and always that
/// the server holds the key of the certificate it shows (the handshake's
/// signatures).
#[derive(Debug)]
struct Verifier {
    provider: Arc<CryptoProvider>,
    check: Check,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let (roots, name) = match &self.check {
            Check::Nothing => return Ok(ServerCertVerified::assertion()),
            Check::Chain(roots) => (roots, false),
            Check::ChainAndName(roots) => (roots, true),
        };
        let certificate = ParsedCertificate::try_from(end_entity)?;
        verify_server_cert_signed_by_trust_anchor(
            &certificate,
            roots,
            intermediates,
            now,
            self.provider.signature_verification_algorithms.all,
        )?;
        if name {
            verify_server_name(&certificate, server_name)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modes_are_libpqs() {
        for (word, mode) in [
            ("disable", SslMode::Disable),
            ("require", SslMode::Require),
            ("verify-ca", SslMode::VerifyCa),
            ("verify-full", SslMode::VerifyFull),
        ] {
            assert_eq!(SslMode::parse(word), Some(mode));
        }
        assert_eq!(SslMode::parse("sometimes"), None);
        assert!(SslMode::VerifyCa.verifies() && !SslMode::Require.verifies());
    }

    #[test]
    fn a_root_file_without_a_certificate_is_said_with_its_path() {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "not a certificate\n").unwrap();
        let why = root_certificates(file.path()).unwrap_err();
        assert!(why.contains("holds no certificate"), "{why}");
        assert!(why.contains(&file.path().display().to_string()), "{why}");
        let missing = root_certificates(Path::new("/nonexistent/root.crt")).unwrap_err();
        assert!(missing.contains("/nonexistent/root.crt"), "{missing}");
    }
}
