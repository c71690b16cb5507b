# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_confirm
short_description: Keep a confirmed commit on a swmgr switch
description:
  - Confirms the commit awaiting confirmation, so that the switch keeps it instead of rolling it
    back when its time runs out. Nothing awaiting confirmation is not an error (changed is false).
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
options:
  revision:
    description:
      - The revision to confirm; default the one awaiting confirmation. A revision that is not the
        one awaiting is refused by the switch.
    type: int
'''

EXAMPLES = r'''
- name: Keep what the fleet committed
  swmgr.switch.swmgr_confirm:
    revision: "{{ committed.revision }}"
'''

RETURN = r'''
revision:
  description: The revision confirmed, if any.
  returned: always
  type: int
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.swmgr.switch.plugins.module_utils.swmgr import Client, SwmgrError, connection_argspec
from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import fail


def main():
    spec = connection_argspec()
    spec.update(revision=dict(type='int'))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    try:
        client = Client.from_params(module.params)
        pending = client.get('/revisions/pending')
        rev = module.params['revision']
        if not pending.get('Awaiting'):
            if rev is None:
                module.exit_json(changed=False, revision=None, msg='no commit awaits confirmation')
        elif rev is None:
            rev = pending['Revision']
        if not module.check_mode:
            client.request('POST', '/revisions/%d/confirm' % rev)
    except SwmgrError as e:
        fail(module, e)
    module.exit_json(changed=True, revision=rev)


if __name__ == '__main__':
    main()
