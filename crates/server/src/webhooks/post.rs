//! One HTTP POST of a webhook's payload: a fresh HTTP/1.1 connection, the body, the answer's
//! status; everything within the configured time.

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use keel_core::WebhookUrl;
use std::time::Duration;

/// Posts `body` to `url` with `headers`; the status line when the receiver answered 2xx,
/// otherwise what went wrong, in words.
pub(crate) async fn post(
    url: &WebhookUrl,
    headers: &[(&'static str, String)],
    body: Vec<u8>,
    timeout: Duration,
) -> Result<String, String> {
    match tokio::time::timeout(timeout, exchange(url, headers, body)).await {
        Ok(result) => result,
        Err(_) => Err(format!("no answer within {} ms", timeout.as_millis())),
    }
}

async fn exchange(
    url: &WebhookUrl,
    headers: &[(&'static str, String)],
    body: Vec<u8>,
) -> Result<String, String> {
    let authority = if url.host.contains(':') {
        format!("[{}]:{}", url.host, url.port)
    } else {
        format!("{}:{}", url.host, url.port)
    };
    let stream = tokio::net::TcpStream::connect((url.host.as_str(), url.port))
        .await
        .map_err(|e| format!("cannot connect to {authority}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP handshake with {authority} failed: {e}"))?;
    let driver = tokio::spawn(connection);
    let mut request = http::Request::post(url.target.as_str())
        .header(http::header::HOST, authority.as_str())
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(
            http::header::USER_AGENT,
            concat!("keel-webhook/", env!("CARGO_PKG_VERSION")),
        );
    for (name, value) in headers {
        request = request.header(*name, value.as_str());
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| format!("cannot build the request: {e}"))?;
    let answer = sender
        .send_request(request)
        .await
        .map_err(|e| format!("{authority} did not answer: {e}"));
    driver.abort();
    let status = answer?.status();
    let line = format!(
        "{} {}",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    )
    .trim_end()
    .to_string();
    if status.is_success() {
        Ok(line)
    } else {
        Err(line)
    }
}
