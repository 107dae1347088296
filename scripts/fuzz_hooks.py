"""schemathesis hooks for scripts/fuzz.ts (loaded through the `hooks` key of its config).

`positive_data_acceptance` says: what the document calls valid, the server accepts. Two kinds of
refusal depend on state a JSON Schema cannot hold, and are handled here, each narrowly:

1. A reused `Idempotency-Key`. The generator draws header values from a small space, so two cases
   of one operation often share a key with different bodies, which the contract answers 422
   `idempotency_key_reused` (DESIGN §3). A status list cannot excuse that without excusing every
   other 422, so each valid case gets a fresh key, as a real client does (`map_case`). Replays of
   one key are covered by the integration tests (jobs, media, enrichment); invalid (negative)
   cases keep the drawn key.
2. A value only the server issues or only the network decides, answered with a stable code that
   says so (`filter_failure`, for this check only and only for these codes):
   - `invalid_pagination_token`: an opaque, signed token from an earlier page; no schema-valid
     string is one unless this API minted it.
   - `oauth_state_invalid`: the one-time `state` of an authorization this API started.
   - `import_failed`: the remote server of a media import answered with an error (its verdict).
   - `file_type_not_allowed` of `POST /v1/media/import-from-url` for a *detected* type: the bytes
     the remote URL serves are the remote's, not the request's (the fuzzer points it at its own
     uploads, CSV chunks among them). A part that declares no type is still reported.
   - `url_not_allowed` for a host that does not resolve or resolves to a private or reserved
     address: the outbound guard's verdict on DNS at request time (the fuzzer's hosts, such as
     example.com, do not resolve in a sandbox). A URL the guard refuses for its shape (scheme,
     credentials, port 0) is still reported. Likewise an `apiBaseUrl` outside the operator's
     `PROVIDER_BASE_URL_ALLOW_LIST`: a deployment setting, not a property of the data.
3. A rule JSON Schema cannot carry, named in the operation's OpenAPI description (issue 27 item
   21 allows at most five such operations): a `scheduledTime` that must be in the future when the
   request arrives (`POST /v1/posts/bulk-schedule`, `POST /v1/posts/external-linkedin-reply`;
   SCHEDULED_TIME_RULE in api/routes/publishing.ts). Only a 400 whose every detail is that
   refusal of a `scheduledTime` field is excused.
   `PATCH /contacts/{id}`: a custom field value checked against the workspace's own definition of
   the field (type, options), and a `companyHeadcount` range whose min exceeds its max
   (CONTACT_PATCH_RULES in api/routes/contacts.ts). Only a 400 whose every detail is one of those
   is excused.
   `POST /contacts/{sourceId}/bulk-upsert-contacts`: the rows' keys are the source's own field
   mapping (per workspace, set through /sources): every mapped `sourceFieldName` occurs in some
   row, and a key is a mapped column or a writable path. Only a 400 whose every detail is one of
   those refusals is excused. `POST /contacts/{sourceId}` (one row): the same rule for its keys.
4. What a media type means. The document names the types a file part may declare
   (`encoding.file.contentType`, e.g. `text/csv, application/x-ndjson` for POST /contact-files)
   and the server checks the bytes are of that type; a JSON Schema string cannot say what a CSV
   file is, so the generator learns it here (`schemathesis.openapi.media_type`): small CSV tables
   (a header and records of as many fields) and JSON Lines files (one JSON object per line); for
   the media types of POST /v1/media/upload, the leading bytes by which `file-type` (db/media.ts)
   recognises each format, then arbitrary bytes.
5. Not about the API: `npm run fuzz` runs two threads, and CPython 3.11's `ast.parse` then at
   times raises "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905)
   while Hypothesis parses a source file only to print a filter lambda in a strategy's repr.
   schemathesis reported that as a Runtime Error of whichever operation it was generating
   (seeds 2477019275 and 1070447578); such a description is `<unknown>` instead, as Hypothesis
   writes it for any lambda whose source it cannot read (test/unit/fuzzHooks.test.ts).
"""
import inspect
import json
import uuid

import schemathesis
from hypothesis import strategies as st
from hypothesis.internal import lambda_sources

_describe_lambda = lambda_sources._lambda_description


def _describe_lambda_or_unknown(f, *args, **kwargs):
    try:
        return _describe_lambda(f, *args, **kwargs)
    except SystemError:
        parameters = str(inspect.signature(f))[1:-1]
        return f"lambda {parameters}: <unknown>" if parameters else "lambda: <unknown>"


lambda_sources._lambda_description = _describe_lambda_or_unknown

SERVER_STATE_CODES = {"invalid_pagination_token", "oauth_state_invalid", "import_failed"}
FUTURE_TIME_OPERATIONS = {("POST", "/v1/posts/bulk-schedule"), ("POST", "/v1/posts/external-linkedin-reply")}
HEADCOUNT_ORDER = "must be a headcount range whose min does not exceed its max"


def _contact_patch_rule(detail):
    path = detail.get("path", "")
    return path.startswith("/customFields/") or (path == "/company/companyHeadcount" and detail.get("message") == HEADCOUNT_ORDER)


def _source_mapping_rule(detail):
    path, message = detail.get("path", ""), detail.get("message", "")
    return (path == "/contactsData" and "of the field mapping occurs in no row" in message) or (
        path.startswith("/contactsData/") and message.startswith("unknown field ") and "the source's fieldMapping" in message
    )


# operation → the one refusal (per detail) its OpenAPI description names as a rule JSON Schema cannot carry
NAMED_RULES = {
    ("PATCH", "/contacts/{id}"): _contact_patch_rule,
    ("POST", "/contacts/{sourceId}/bulk-upsert-contacts"): _source_mapping_rule,
    ("POST", "/contacts/{sourceId}"): lambda d: d.get("message", "").startswith("unknown field ") and "GET /schema/contact" in d.get("message", ""),
}
DEPLOYMENT_VERDICTS = ("does not resolve", "a private or reserved address", "(PROVIDER_BASE_URL_ALLOW_LIST)")


_CELL = st.text(alphabet=st.characters(categories=["L", "N"]), min_size=1, max_size=12)


@st.composite
def _csv_file(draw):
    header = draw(st.lists(_CELL, min_size=1, max_size=5, unique=True))
    rows = draw(st.lists(st.lists(_CELL, min_size=len(header), max_size=len(header)), min_size=1, max_size=3))
    return "".join(",".join(r) + "\n" for r in [header, *rows]).encode()


_JSON_LINE = st.dictionaries(_CELL, st.one_of(_CELL, st.integers(-1000, 1000), st.booleans(), st.none()), min_size=1, max_size=5)
schemathesis.openapi.media_type("text/csv", _csv_file())

# The signature of each media type POST /v1/media/upload takes (domain/social.ts MEDIA_TYPES), as
# file-type reads it; a PNG stops at an empty IDAT chunk, so what follows is not read as chunks.
_MEDIA_SIGNATURES = {
    "image/jpeg": bytes.fromhex("ffd8ffe000104a46494600010100"),
    "image/png": bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000049444154"),
    "image/gif": b"GIF89a",
    "image/webp": b"RIFF" + bytes.fromhex("24000000") + b"WEBPVP8 ",
    "video/mp4": bytes.fromhex("00000018") + b"ftypisom" + bytes.fromhex("00000200") + b"isomiso2",
    "video/quicktime": bytes.fromhex("00000014") + b"ftypqt  " + bytes.fromhex("00000200") + b"qt  ",
    "application/pdf": b"%PDF-1.4\n",
}
for _type, _signature in _MEDIA_SIGNATURES.items():
    schemathesis.openapi.media_type(_type, st.binary(max_size=64).map(lambda tail, head=_signature: head + tail))
schemathesis.openapi.media_type(
    "application/x-ndjson", st.lists(_JSON_LINE, min_size=1, max_size=3).map(lambda rows: "".join(json.dumps(r) + "\n" for r in rows).encode())
)


@schemathesis.hook
def map_case(context, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or not case.headers:
        return case
    for name in list(case.headers):
        if name.lower() == "idempotency-key":
            case.headers[name] = str(uuid.uuid4())
    return case


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """False drops the failure: a valid-looking value the server could not have issued."""
    if getattr(failure, "code", None) != "ST202" or response is None or response.status_code != 400:
        return True
    try:
        error = json.loads(response.content)["error"]
    except (ValueError, KeyError, TypeError):
        return True
    code = error.get("code")
    if code in SERVER_STATE_CODES:
        return False
    if code == "url_not_allowed" and any(v in error.get("message", "") for v in DEPLOYMENT_VERDICTS):
        return False
    if code == "file_type_not_allowed" and (case.method.upper(), case.path) == ("POST", "/v1/media/import-from-url") and ": detected type " in error.get("message", ""):
        return False
    details = error.get("details") or []
    if (
        code == "validation_failed"
        and (case.method.upper(), case.path) in FUTURE_TIME_OPERATIONS
        and details
        and all(d.get("path", "").endswith("/scheduledTime") and d.get("message") == "must be in the future" for d in details)
    ):
        return False
    rule = NAMED_RULES.get((case.method.upper(), case.path))
    if code == "validation_failed" and rule and details and all(rule(d) for d in details):
        return False
    return True
