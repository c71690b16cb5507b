# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_object
short_description: Manage objects of any swmgr kind
description:
  - The resource modules' states for any config kind swmgr declares, named by O(kind); the objects
    take swmgr's field names (C(IpAddr)) or the option names (C(ip_addr)).
  - One task is one commit, computed by the switch; check mode is its dry run.
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  kind:
    description:
      - The kind, as swmgr names it (C(Vlan), C(BGPv4Neighbor), ...).
    type: str
    required: true
  config:
    description:
      - The objects (a list; a dict for a kind with one object).
    type: raw
'''

EXAMPLES = r'''
- name: VLAN 100 with two untagged ports, whatever else VLAN 100 had
  swmgr.switch.swmgr_object:
    kind: Vlan
    state: replaced
    config:
      - VlanId: 100
        UntagIntfList: [fpPort1, fpPort2]
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr import Client, SwmgrError, connection_argspec
from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_model import KINDS
from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import (
    STATES, Resource, SwmgrModule, commit_change, fail, finish, from_api)


def main():
    spec = connection_argspec()
    spec.update(
        kind=dict(type='str', required=True),
        config=dict(type='raw'),
        state=dict(type='str', choices=STATES, default='merged'),
        comment=dict(type='str'),
        confirm=dict(type='int', default=0),
        update_secrets=dict(type='str', choices=['on_create', 'always'], default='on_create'),
    )
    module = SwmgrModule(argument_spec=spec, supports_check_mode=True)
    p = module.params
    try:
        res = Resource(p['kind'], p['state'], p['config'], p['update_secrets'])
        if p['state'] == 'rendered':
            module.exit_json(changed=False, rendered=res.edits(None))
        client = Client.from_params(p)
        if p['state'] == 'gathered':
            objs = [o['Object'] for o in client.list_all('/config/%ss' % res.kind)]
            module.exit_json(changed=False, gathered=[from_api(KINDS[res.kind]['fields'], o) for o in objs],
                             revision=client.running_revision())
        out = commit_change(client, [res], p['comment'] or 'ansible swmgr_object %s %s' % (res.kind, p['state']),
                            p['confirm'], module.check_mode)
    except SwmgrError as e:
        fail(module, e)
    finish(module, out)


if __name__ == '__main__':
    main()
