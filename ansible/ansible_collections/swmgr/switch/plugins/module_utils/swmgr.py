# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE)
"""A client of swmgr's REST API for the collection's modules.

The modules run on the controller and call the switch's REST API directly
(Python's http.client): that needs nothing beyond ansible-core (no
ansible.netcommon, no persistent connection process), keeps the certificate
check (CA file or a pinned SHA-256 fingerprint) before any credential is
sent, and lets one task be one candidate and one commit.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import hashlib
import json
import ssl

try:
    import http.client as httplib
    from urllib.parse import urlsplit, quote, urlencode
except ImportError:  # Python 2 is not supported; keeps the import sanity test quiet
    httplib = None

API = '/public/v1'


class SwmgrError(Exception):
    """swmgr's answer to a request it refused, its message kept verbatim."""

    def __init__(self, status, message, code=None, body=None):
        super(SwmgrError, self).__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.body = body


def connection_argspec():
    return dict(
        url=dict(type='str', required=True),
        user=dict(type='str'),
        password=dict(type='str', no_log=True),
        validate_certs=dict(type='bool', default=True),
        ca_path=dict(type='path'),
        fingerprint=dict(type='str'),
        timeout=dict(type='int', default=60),
    )


def _loopback(host):
    return host in ('localhost', '::1') or host.startswith('127.')


class Client(object):
    """One switch's REST API."""

    def __init__(self, url, user=None, password=None, validate_certs=True, ca_path=None, fingerprint=None, timeout=60):
        parts = urlsplit(url)
        if parts.scheme not in ('http', 'https') or not parts.hostname:
            raise SwmgrError(0, 'url %r: give https://host[:port] (or http://127.0.0.1:8080 on the switch)' % url)
        if parts.path not in ('', '/'):
            raise SwmgrError(0, 'url %r: give the switch only, without a path' % url)
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port
        self.timeout = timeout
        self.fingerprint = None
        if fingerprint:
            self.fingerprint = fingerprint.replace(':', '').strip().lower()
            if len(self.fingerprint) != 64:
                raise SwmgrError(0, 'fingerprint: give the SHA-256 of the certificate, 64 hex digits')
        self.auth = None
        if user:
            if self.scheme == 'http' and not _loopback(self.host):
                raise SwmgrError(0, 'refusing to send the credentials of %s in clear to %s: use https://' % (user, self.host))
            token = base64.b64encode(('%s:%s' % (user, password or '')).encode('utf-8')).decode('ascii')
            self.auth = 'Basic ' + token
        self.context = None
        if self.scheme == 'https':
            if self.fingerprint:
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            elif validate_certs:
                ctx = ssl.create_default_context(cafile=ca_path)
                if ca_path:
                    # swmgr's self-signed certificate names the switch, not
                    # always the address the inventory uses.
                    ctx.check_hostname = False
            else:
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            self.context = ctx
        self._conn = None

    @classmethod
    def from_params(cls, p):
        return cls(p['url'], p.get('user'), p.get('password'), p.get('validate_certs', True), p.get('ca_path'), p.get('fingerprint'), p.get('timeout') or 60)

    def _connection(self):
        if self._conn is not None:
            return self._conn
        if self.scheme == 'https':
            conn = httplib.HTTPSConnection(self.host, self.port, timeout=self.timeout, context=self.context)
            conn.connect()
            if self.fingerprint:
                der = conn.sock.getpeercert(binary_form=True)
                got = hashlib.sha256(der).hexdigest()
                if got != self.fingerprint:
                    conn.close()
                    raise SwmgrError(0, 'the certificate of %s has SHA-256 %s, not the pinned %s: nothing was sent' % (self.host, got, self.fingerprint))
        else:
            conn = httplib.HTTPConnection(self.host, self.port, timeout=self.timeout)
        self._conn = conn
        return conn

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method, path, body=None, headers=None, ok=(200, 201)):
        """Send one request to API + path; return (status, decoded body, headers).

        A status not in ok raises SwmgrError with swmgr's own message.
        """
        hdrs = {'User-Agent': 'swmgr-ansible', 'Accept': 'application/json'}
        if self.auth:
            hdrs['Authorization'] = self.auth
        if headers:
            hdrs.update(headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode('utf-8')
            hdrs['Content-Type'] = 'application/json'
        for attempt in (1, 2):
            try:
                conn = self._connection()
                conn.request(method, API + path, body=data, headers=hdrs)
                resp = conn.getresponse()
                raw = resp.read()
                break
            except (httplib.HTTPException, OSError) as e:
                self.close()
                # A kept-alive connection the switch closed meanwhile: once more.
                if attempt == 2 or isinstance(e, ssl.SSLError):
                    raise SwmgrError(0, 'cannot reach %s://%s:%s: %s' % (self.scheme, self.host, self.port or (443 if self.scheme == 'https' else 80), getattr(e, 'strerror', None) or e))
        try:
            decoded = json.loads(raw.decode('utf-8')) if raw else {}
        except ValueError:
            decoded = {'Result': raw.decode('utf-8', 'replace')}
        if resp.status not in ok:
            message = None
            code = None
            if isinstance(decoded, dict):
                err = decoded.get('Error') or {}
                message = err.get('Message') or decoded.get('Result')
                code = err.get('Code')
            raise SwmgrError(resp.status, message or ('HTTP %d' % resp.status), code, decoded)
        return resp.status, decoded, dict((k.lower(), v) for k, v in resp.getheaders())

    def get(self, path):
        return self.request('GET', path)[1]

    def list_all(self, path):
        """Every object of a get-all path, page by page."""
        objects = []
        marker = 0
        while True:
            sep = '&' if '?' in path else '?'
            page = self.get('%s%sCurrentMarker=%d&Count=1000' % (path, sep, marker))
            objects.extend(page.get('Objects') or [])
            if not page.get('MoreExist'):
                return objects
            marker = page['NextMarker']

    def running_revision(self):
        """The running revision (the newest in the history)."""
        page = self.get('/revisions?Count=1')
        objs = page.get('Objects') or []
        if not objs:
            return 0
        return objs[0]['Object']['Revision']


def key_query(keys, obj):
    """The query string that names obj by its key fields."""
    return urlencode([(k, _text(obj[k])) for k in keys if k in obj])


def _text(v):
    if isinstance(v, bool):
        return 'true' if v else 'false'
    return '%s' % v


def path_quote(s):
    return quote(s, safe='')
