# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_facts
short_description: Read a swmgr switch's running configuration, state and revision
description:
  - Sets C(swmgr_revision) (the running revision), C(swmgr_pending) (the commit awaiting
    confirmation, or C(Awaiting=false)), C(swmgr_config) (the objects of O(kinds), by kind, with the
    option names) and C(swmgr_state) (the state objects of O(state), by kind, with swmgr's field
    names).
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
options:
  kinds:
    description:
      - Config kinds to read; default all.
    type: list
    elements: str
  state:
    description:
      - State kinds to read (C(Port) for counters and oper state, C(BGPv4Neighbor) for sessions).
    type: list
    elements: str
    default: []
'''

EXAMPLES = r'''
- name: Are the BGP sessions up?
  swmgr.switch.swmgr_facts:
    kinds: []
    state: [BGPv4Neighbor]
- ansible.builtin.assert:
    that: swmgr_state.BGPv4Neighbor | map(attribute='SessionState') | unique == [6]
'''

RETURN = r'''
ansible_facts:
  description: swmgr_revision, swmgr_pending, swmgr_config, swmgr_state.
  returned: always
  type: dict
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.swmgr.switch.plugins.module_utils.swmgr import Client, SwmgrError, connection_argspec
from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_model import KINDS
from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import fail, from_api


def main():
    spec = connection_argspec()
    spec.update(kinds=dict(type='list', elements='str'), state=dict(type='list', elements='str', default=[]))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    kinds = module.params['kinds']
    if kinds is None:
        kinds = sorted(KINDS)
    try:
        client = Client.from_params(module.params)
        facts = dict(swmgr_revision=client.running_revision(), swmgr_pending=client.get('/revisions/pending'),
                     swmgr_config={}, swmgr_state={})
        for k in kinds:
            if k not in KINDS:
                module.fail_json(msg='no config kind %r; kinds: %s' % (k, ', '.join(sorted(KINDS))))
            facts['swmgr_config'][k] = [from_api(KINDS[k]['fields'], o['Object']) for o in client.list_all('/config/%ss' % k)]
        for k in module.params['state']:
            facts['swmgr_state'][k] = [o['Object'] for o in client.list_all('/state/%ss' % k)]
    except SwmgrError as e:
        fail(module, e)
    module.exit_json(changed=False, ansible_facts=facts)


if __name__ == '__main__':
    main()
