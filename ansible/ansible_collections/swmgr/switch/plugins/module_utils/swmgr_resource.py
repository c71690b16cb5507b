# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE)
"""What every module of the collection does with a switch: one task, one commit.

A task opens a candidate on the switch, stages its edits there in one
request (all or none), reads the switch's diff, and then:
- nothing to change: discards the candidate; changed is false and no
  revision is made;
- check mode: asks the switch for a dry run of the commit (which reports
  what it would refuse), and discards the candidate;
- otherwise: commits it with If-Match on the candidate's base revision, as
  one revision, optionally awaiting confirmation. A commit someone else made
  meanwhile (412) makes the task start again on the new configuration.

merged stages PATCH or POST per object. An edit that carries a value swmgr
never stores (a new User's password) cannot wait in a stored candidate: the
switch dry-runs it with the rest, and it is then written directly, its own
commit, after the candidate's. replaced, overridden and deleted
stage PUT edits, which the switch turns into edits on its own candidate:
the switch, not Ansible, computes which objects to delete and which fields
return to their defaults, and a failure anywhere changes nothing.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.swmgr.switch.plugins.module_utils.swmgr import (
    Client, SwmgrError, connection_argspec, key_query, path_quote)
from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_model import KINDS, ACTIONS

STATES = ['merged', 'replaced', 'overridden', 'deleted', 'gathered', 'rendered']
ATTEMPTS = 3


def option_spec(fields):
    """The Ansible argument spec of a kind's settable fields."""
    spec = {}
    for f in fields:
        if not f['settable']:
            continue
        o = dict(type=f['type'])
        if f.get('elements'):
            o['elements'] = f['elements']
        if f.get('choices'):
            o['choices'] = f['choices']
        if f.get('secret'):
            o['no_log'] = True
        if f.get('sub'):
            o['options'] = option_spec(f['sub'])
        spec[f['option']] = o
    return spec


def _secret_names(fields):
    """The option and API names of fields' secret fields, and the fields
    with records of their own (sub), by name."""
    secret, subs = set(), {}
    for f in fields:
        if f.get('secret'):
            secret.update((f['name'], f['option']))
        if f.get('sub'):
            subs[f['name']] = subs[f['option']] = f['sub']
    return secret, subs


def _all_fields():
    """Every kind's fields, for objects of a kind that is not known."""
    return [f for k in KINDS.values() for f in k['fields']]


def secret_values(fields, items):
    """Every value that a field the model marks secret has in items (objects
    with option or API names, records included, as a list or one dict)."""
    secret, subs = _secret_names(fields)
    out = set()
    for it in items if isinstance(items, list) else [items]:
        if not isinstance(it, dict):
            continue
        for name, value in it.items():
            if name in secret and value is not None:
                values = value if isinstance(value, list) else [value]
                out.update('%s' % v for v in values if '%s' % v != '')
            elif name in subs:
                out.update(secret_values(subs[name], value))
    return out


class SwmgrModule(AnsibleModule):
    """An AnsibleModule that hides the values of every field the model marks
    secret in the objects its arguments give (kind and config, or
    resources), of any kind: from its result, its failure, the diff and the
    invocation it logs, at every verbosity. The generic modules take their
    objects as raw data, which an option's no_log cannot reach. The values
    are known before the arguments are validated, so that a task whose
    arguments do not validate hides them too."""

    def _load_params(self):
        super(SwmgrModule, self)._load_params()
        p = self.params if isinstance(self.params, dict) else {}
        given = [(p.get('kind'), p.get('config'))]
        resources = p.get('resources')
        for r in resources if isinstance(resources, list) else []:
            if isinstance(r, dict):
                given.append((r.get('kind'), r.get('config')))
        for kind, config in given:
            if config is not None:
                fields = KINDS[kind]['fields'] if kind in KINDS else _all_fields()
                self.no_log_values.update(secret_values(fields, config))


def resource_argspec(kind):
    spec = connection_argspec()
    k = KINDS[kind]
    config = dict(type='dict', options=option_spec(k['fields'])) if k['singleton'] else \
        dict(type='list', elements='dict', options=option_spec(k['fields']))
    spec.update(
        config=config,
        state=dict(type='str', choices=STATES, default='merged'),
        comment=dict(type='str'),
        confirm=dict(type='int', default=0),
        update_secrets=dict(type='str', choices=['on_create', 'always'], default='on_create'),
    )
    return spec


BOOLEANS = {'true': True, 'yes': True, 'on': True, '1': True, 'false': False, 'no': False, 'off': False, '0': False}


def coerce(f, value, where):
    """value as the model's type of field f: a number or a boolean given as a
    string (what a Jinja2 template renders, "{{ mtu }}" is "9000") becomes
    one, a number given for a string field its text; anything else is left
    for the switch to judge. A string that is not a number for a number
    field is refused here, naming the field."""
    t = f['type']
    if t == 'int' and isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            raise SwmgrError(0, '%s: %s %r is not an integer' % (where, f['name'], value))
    if t == 'int' and isinstance(value, float) and value == int(value):
        return int(value)
    if t == 'bool' and isinstance(value, str):
        b = BOOLEANS.get(value.strip().lower())
        if b is None:
            raise SwmgrError(0, '%s: %s %r is not a boolean (true or false)' % (where, f['name'], value))
        return b
    if t == 'str' and isinstance(value, (int, float)) and not isinstance(value, bool):
        return '%s' % value
    if t == 'list' and f.get('elements') == 'str' and isinstance(value, list):
        return ['%s' % v if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in value]
    return value


def to_api(fields, item, where):
    """item (option names or API names) as the REST body, values as the
    model's types (coerce); None values dropped."""
    by_option = dict((f['option'], f) for f in fields)
    by_name = dict((f['name'], f) for f in fields)
    out = {}
    for name, value in item.items():
        if value is None:
            continue
        f = by_option.get(name) or by_name.get(name)
        if f is None:
            raise SwmgrError(0, '%s: no field %r; fields: %s' % (where, name, ', '.join(sorted(by_option))))
        if f.get('sub') and isinstance(value, dict):
            value = to_api(f['sub'], value, where + '.' + f['name'])
        elif f.get('sub') and isinstance(value, list):
            value = [to_api(f['sub'], v, where + '.' + f['name']) if isinstance(v, dict) else v for v in value]
        else:
            value = coerce(f, value, where)
        out[f['name']] = value
    return out


def with_key_defaults(spec, item):
    """item with the key fields it leaves out set to their defaults, as the
    switch defaults them (a BGP neighbor's Vrf "default" and IntfRef ""),
    so that it names one object; the key fields without a default that it
    lacks, by name."""
    out = dict(item)
    missing = []
    by_name = dict((f['name'], f) for f in spec['fields'])
    for k in spec['keys']:
        if k in out:
            continue
        f = by_name.get(k, {})
        if 'default' in f:
            out[k] = f['default']
        else:
            missing.append('%s (%s)' % (f.get('option', k), k))
    return out, missing


def from_api(fields, obj):
    """A REST object with option names."""
    by_name = dict((f['name'], f) for f in fields)
    out = {}
    for name, value in obj.items():
        f = by_name.get(name)
        if f is None:
            out[name] = value
            continue
        if f.get('sub') and isinstance(value, dict):
            value = from_api(f['sub'], value)
        elif f.get('sub') and isinstance(value, list):
            value = [from_api(f['sub'], v) if isinstance(v, dict) else v for v in value]
        out[f['option']] = value
    return out


class Resource(object):
    """One kind, a state and the objects a task gives for it."""

    def __init__(self, kind, state, items, update_secrets='on_create'):
        if kind not in KINDS:
            raise SwmgrError(0, 'no config kind %r; kinds: %s' % (kind, ', '.join(sorted(KINDS))))
        if state not in STATES:
            raise SwmgrError(0, '%s: state %r; states: %s' % (kind, state, ', '.join(STATES)))
        self.kind = kind
        self.spec = KINDS[kind]
        self.state = state
        self.update_secrets = update_secrets
        if items is None:
            items = []
        elif isinstance(items, dict):
            items = [items]
        self.items = [to_api(self.spec['fields'], it, '%s[%d]' % (kind, i)) for i, it in enumerate(items)]
        if state in ('merged', 'replaced', 'rendered') and not self.items:
            raise SwmgrError(0, '%s: state %s needs config' % (kind, state))
        if not self.spec['singleton'] and state in ('merged', 'replaced', 'overridden', 'deleted'):
            for i, it in enumerate(self.items):
                self.items[i], missing = with_key_defaults(self.spec, it)
                if missing:
                    raise SwmgrError(0, '%s[%d]: give %s to say which object (the key is %s; the fields with a default may be left out)' % (
                        kind, i, ', '.join(missing), ', '.join(self.spec['keys'])))

    def secrets(self):
        return [f['name'] for f in self.spec['fields'] if f.get('secret')]

    def transient(self, edit):
        """Whether edit carries a value swmgr never stores (a new User's
        password): such an edit cannot wait in a candidate."""
        body = edit.get('Body')
        return isinstance(body, dict) and any(f.get('transient') and f['name'] in body for f in self.spec['fields'])

    def key(self, obj):
        return tuple('%s' % obj.get(k) for k in self.spec['keys'])

    def path(self, obj=None):
        p = 'config/' + self.kind
        if obj is not None and self.spec['keys']:
            p += '?' + key_query(self.spec['keys'], obj)
        return p

    def edits(self, current):
        """The REST edits of this resource, given the candidate's objects of
        the kind (None: not known, as for rendered)."""
        have = {}
        if current is not None:
            for o in current:
                have[self.key(o)] = o
        singleton = self.spec['singleton']
        one = list(have.values())[0] if singleton and have else None

        def body(it):
            it = dict(it)
            if self.update_secrets != 'always' and (singleton or self.key(it) in have):
                for s in self.secrets():
                    it.pop(s, None)
            if singleton and one is not None:
                for k in self.spec['keys']:
                    it.setdefault(k, one[k])
            return it

        out = []
        if self.state == 'merged':
            for it in self.items:
                b = body(it)
                if singleton:
                    out.append(dict(Method='PATCH', Path=self.path(b), Body=b))
                elif current is not None and self.key(it) not in have and self.spec['creatable']:
                    out.append(dict(Method='POST', Path=self.path(), Body=b))
                elif current is None and self.spec['creatable']:
                    out.append(dict(Method='POST', Path=self.path(), Body=b))
                else:
                    out.append(dict(Method='PATCH', Path=self.path(b), Body=b))
        elif self.state == 'replaced':
            for it in self.items:
                out.append(dict(Method='PUT', Path=self.path(), Body=body(it)))
        elif self.state == 'overridden':
            out.append(dict(Method='PUT', Path=self.path() + 's', Body=[body(it) for it in self.items]))
        elif self.state == 'deleted':
            if not self.items:
                out.append(dict(Method='PUT', Path=self.path() + 's', Body=[]))
            for it in self.items:
                if current is not None and self.key(it) not in have:
                    continue
                if self.spec['creatable']:
                    out.append(dict(Method='DELETE', Path=self.path(it)))
                else:
                    out.append(dict(Method='PUT', Path=self.path(), Body=dict((k, it[k]) for k in self.spec['keys'])))
        elif self.state == 'rendered':
            out = Resource(self.kind, 'merged', self.items).edits(None)
        return out


def _objects(page_objects):
    return [o['Object'] for o in page_objects]


def commit_change(client, resources, comment, confirm=0, check=False, commit=True, candidate=None):
    """Stage resources in one candidate and commit it as one revision.

    Returns a dict: changed, revision, changes, and candidate when commit is
    false (the candidate is then kept, staged and dry-run, for a later
    commit_change(..., candidate=id)).
    """
    for attempt in range(1, ATTEMPTS + 1):
        own = candidate is None
        if own:
            _, info, _ = client.request('POST', '/candidates', {'Comment': comment or ''})
            cand, base = info['CandidateId'], info['BaseRevision']
        else:
            info = client.get('/candidates/' + path_quote(candidate))
            cand, base = candidate, info['BaseRevision']
        keep = False
        try:
            direct = []
            if own:
                edits = []
                for r in resources:
                    current = None
                    if r.state in ('merged', 'replaced', 'overridden', 'deleted'):
                        current = _objects(client.list_all('/candidates/%s/config/%ss' % (path_quote(cand), r.kind)))
                    for e in r.edits(current):
                        (direct if r.transient(e) else edits).append(e)
                if edits:
                    client.request('POST', '/candidates/%s/edits' % path_quote(cand), {'Edits': edits})
            # The switch checks the direct writes (dry run) before anything
            # is committed.
            direct_changes = []
            for e in direct:
                _, out, _ = client.request(e['Method'], '/%s%sdry_run=true' % (e['Path'], '&' if '?' in e['Path'] else '?'), e.get('Body'))
                direct_changes.extend(out.get('Changes') or [])
            changes = client.get('/candidates/%s/diff' % path_quote(cand)).get('Changes') or []
            if not changes and not direct_changes:
                return dict(changed=False, revision=base, changes=[])
            if not changes:
                if check:
                    return dict(changed=True, revision=base, changes=direct_changes)
                return _write_direct(client, direct, base, direct_changes)
            options = {'Comment': comment or ''}
            if confirm:
                options['Confirm'] = confirm
            if check or not commit:
                client.request('POST', '/candidates/%s/commit?dry_run=true' % path_quote(cand), options)
                if direct and not check:
                    raise SwmgrError(0, 'a change that creates a User with its password cannot be staged for later (swmgr never stores passwords): commit it directly')
                if not commit and not check:
                    keep = True
                    return dict(changed=True, revision=base, changes=changes, candidate=cand)
                return dict(changed=True, revision=base, changes=changes + direct_changes)
            _, out, _ = client.request('POST', '/candidates/%s/commit' % path_quote(cand), options,
                                       headers={'If-Match': '"%d"' % base})
            keep = True  # a committed candidate is gone
            if direct:
                return _write_direct(client, direct, out.get('Revision'), changes + direct_changes)
            return dict(changed=True, revision=out.get('Revision'), changes=changes)
        except SwmgrError as e:
            if e.status == 412 and own and attempt < ATTEMPTS:
                continue  # someone committed meanwhile: compute again on the new configuration
            raise
        finally:
            if not keep and own:
                try:
                    client.request('DELETE', '/candidates/' + path_quote(cand), ok=(200, 404))
                except SwmgrError:
                    pass


def _write_direct(client, direct, revision, changes):
    """Make the writes that cannot wait in a candidate, one commit each."""
    for e in direct:
        _, _, hdrs = client.request(e['Method'], '/' + e['Path'], e.get('Body'))
        etag = hdrs.get('etag', '').strip('"')
        if etag.isdigit():
            revision = int(etag)
    return dict(changed=True, revision=revision, changes=changes)


def diff_of(changes):
    """Ansible's diff (before, after) from the switch's changes."""
    before, after = {}, {}
    for c in changes:
        name = '%s %s' % (c.get('Kind'), c.get('Key'))
        if c.get('Before') is not None:
            before[name] = c['Before']
        if c.get('After') is not None:
            after[name] = c['After']
    return dict(before=before, after=after)


def fail(module, e, **extra):
    result = dict(msg=e.message, status=e.status)
    if e.code:
        result['code'] = e.code
    result.update(extra)
    module.fail_json(**result)


def finish(module, out):
    if module._diff and out.get('changes'):
        out['diff'] = diff_of(out['changes'])
    module.exit_json(**out)


def run_resource(kind):
    """The main of a kind's resource module."""
    module = SwmgrModule(argument_spec=resource_argspec(kind), supports_check_mode=True)
    p = module.params
    spec = KINDS[kind]
    try:
        res = Resource(kind, p['state'], p['config'], p['update_secrets'])
        if p['state'] == 'rendered':
            module.exit_json(changed=False, rendered=res.edits(None))
        client = Client.from_params(p)
        if p['state'] == 'gathered':
            objs = _objects(client.list_all('/config/%ss' % kind))
            gathered = [from_api(spec['fields'], o) for o in objs]
            if spec['singleton']:
                gathered = gathered[0] if gathered else {}
            module.exit_json(changed=False, gathered=gathered, revision=client.running_revision())
        comment = p['comment'] or 'ansible %s %s' % (spec['module'], p['state'])
        out = commit_change(client, [res], comment, p['confirm'], module.check_mode)
    except SwmgrError as e:
        fail(module, e)
    finish(module, out)


def run_action(name):
    """The main of an action's module (swmgr_save): check mode is its dry run."""
    fields = ACTIONS[name]
    spec = connection_argspec()
    spec.update(option_spec(fields))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    opts = dict((f['option'], module.params.get(f['option'])) for f in fields if f['settable'])
    try:
        body = to_api(fields, opts, name)
        client = Client.from_params(module.params)
        path = '/action/' + name + ('?dry_run=true' if module.check_mode else '')
        _, out, _ = client.request('POST', path, body)
    except SwmgrError as e:
        fail(module, e)
    module.exit_json(changed=True, result=out)
