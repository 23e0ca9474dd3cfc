"""Schemathesis hooks for `npm run fuzz` (loaded through SCHEMATHESIS_HOOKS).

Every check runs; these drop four kinds of failure that are the contract's documented behaviour.
"""

import itertools
import re

import schemathesis
from schemathesis.openapi.checks import IgnoredAuth, RejectedPositiveData, UnsupportedMethodResponse


_PRINTABLE_KEY = re.compile(r"^[\x20-\x7e]{1,240}$")
_calls = itertools.count()


@schemathesis.hook
def map_headers(context, headers):
    """Make each generated printable Idempotency-Key unique, as a client's keys are.

    Left alone, the generator repeats short keys ("0") across different requests, so most POSTs
    end as 422 idempotency_key_reused and the writes behind them are barely exercised. Keys that
    are not printable ASCII (negative cases) are sent as generated.
    """
    key = (headers or {}).get("Idempotency-Key")
    if isinstance(key, str) and _PRINTABLE_KEY.match(key) and key.strip():
        headers["Idempotency-Key"] = f"{key.strip()}.{next(_calls)}"
    return headers


def _body_field(response, name):
    """A top-level field of a JSON object body, or None."""
    try:
        body = response.json()
    except ValueError:
        return None
    return body.get(name) if isinstance(body, dict) else None


def _error_code(response):
    return _body_field(response, "code")


@schemathesis.hook
def filter_failure(context, failure, case, response):
    # The cursor is an opaque string only a Link header supplies: any string is schema-valid, only
    # the API's own cursors are valid. A made-up one is refused with 400 invalid_cursor.
    if isinstance(failure, RejectedPositiveData) and "cursor" in (case.query or {}):
        return not (response.status_code == 400 and _error_code(response) == "invalid_cursor")
    # Generated Idempotency-Keys repeat across different requests ("0" is a favourite); the same key
    # on a different request is refused with 422 idempotency_key_reused, as the contract says.
    if isinstance(failure, RejectedPositiveData) and response.status_code == 422:
        return _error_code(response) != "idempotency_key_reused"
    # Requests without a valid key are rate-limited per client IP before they are told 401 (docs/api.md,
    # "Keys"; kong.yml's anonymous consumer). The fuzzer's probes all come from one address, so
    # past that limit the answer to a keyless probe is 429: authentication is still enforced.
    if isinstance(failure, IgnoredAuth) and "got `429 " in failure.message:
        return False
    # nginx answers TRACE itself, 405 without Allow, before Kong's phases (ngx_http_request.c). No
    # route is chosen, so no API's plugins run on it: the body is the gateway's own, Kong's
    # {"message": "Method not allowed"}, as gateway/openapi.yaml says (ErrorCode, method_not_allowed).
    if isinstance(failure, UnsupportedMethodResponse) and failure.method == "TRACE":
        return not (response.status_code == 405 and _body_field(response, "message") == "Method not allowed")
    return True

