# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_config
short_description: Commit changes of several kinds on a swmgr switch as one revision
description:
  - Stages every resource in one candidate on the switch and commits them as one revision, or
    changes nothing; optionally as a confirmed commit that the switch rolls back by itself unless
    M(swmgr.switch.swmgr_confirm) follows within O(confirm) seconds.
  - With O(commit=false) the change is only staged and dry-run by the switch, and RV(candidate) is
    kept for a later task with O(candidate), so that a fleet can check every switch before it
    commits any.
  - Check mode is the switch's dry run; diff mode shows the switch's diff.
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
options:
  resources:
    description:
      - The changes, applied in order within the one candidate.
    type: list
    elements: dict
    default: []
    suboptions:
      kind:
        description:
          - The kind, as swmgr names it (C(NtpServer), C(IPv4Intf), ...).
        type: str
        required: true
      state:
        description:
          - As the resource modules' O(swmgr.switch.swmgr_ntp_server#module:state), but not
            C(gathered) or C(rendered).
        type: str
        choices: [merged, replaced, overridden, deleted]
        default: merged
      config:
        description:
          - The objects, with the resource module's option names (C(ip_addr)) or swmgr's field
            names (C(IpAddr)).
        type: raw
  comment:
    description:
      - The revision's comment.
    type: str
  confirm:
    description:
      - Seconds within which the commit must be confirmed, or the switch rolls it back; 0 commits
        for good.
    type: int
    default: 0
  commit:
    description:
      - C(false) stages and dry-runs the change and keeps the candidate (RV(candidate)).
    type: bool
    default: true
  candidate:
    description:
      - Commit this candidate, staged earlier with O(commit=false), instead of O(resources).
    type: str
  update_secrets:
    description:
      - As the resource modules' option.
    type: str
    choices: [on_create, always]
    default: on_create
'''

EXAMPLES = r'''
- name: NTP and an uplink address in one commit, rolled back unless confirmed in 2 minutes
  swmgr.switch.swmgr_config:
    comment: NTP and uplink
    confirm: 120
    resources:
      - kind: NtpServer
        state: overridden
        config:
          - ip_addr: 192.0.2.10
      - kind: IPv4Intf
        config:
          - intf_ref: fpPort1
            ip_addr: 10.1.1.1/30
'''

RETURN = r'''
changed:
  description: Whether the configuration changed (or would, in check mode).
  returned: always
  type: bool
revision:
  description: The revision the commit made; the running revision when nothing changed.
  returned: always
  type: int
changes:
  description: The switch's diff of the change.
  returned: always
  type: list
candidate:
  description: The staged candidate, with O(commit=false).
  returned: when commit is false and something would change
  type: str
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr import Client, SwmgrError, connection_argspec
from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import Resource, SwmgrModule, commit_change, fail, finish


def main():
    spec = connection_argspec()
    spec.update(
        resources=dict(type='list', elements='dict', default=[], options=dict(
            kind=dict(type='str', required=True),
            state=dict(type='str', choices=['merged', 'replaced', 'overridden', 'deleted'], default='merged'),
            config=dict(type='raw'),
        )),
        comment=dict(type='str'),
        confirm=dict(type='int', default=0),
        commit=dict(type='bool', default=True),
        candidate=dict(type='str'),
        update_secrets=dict(type='str', choices=['on_create', 'always'], default='on_create'),
    )
    module = SwmgrModule(argument_spec=spec, supports_check_mode=True, mutually_exclusive=[('resources', 'candidate')])
    p = module.params
    try:
        resources = [Resource(r['kind'], r['state'], r['config'], p['update_secrets']) for r in p['resources']]
        if not resources and not p['candidate']:
            module.fail_json(msg='give resources, or a candidate to commit')
        client = Client.from_params(p)
        out = commit_change(client, resources, p['comment'] or 'ansible swmgr_config', p['confirm'],
                            module.check_mode, p['commit'], p['candidate'])
    except SwmgrError as e:
        fail(module, e)
    finish(module, out)


if __name__ == '__main__':
    main()
