# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_rollback
short_description: Restore a swmgr switch's configuration as it was after a revision
description:
  - A new commit that makes the configuration what it was after O(revision), atomically (swmgr's
    Rollback action). Check mode is the switch's dry run.
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
options:
  revision:
    description:
      - The revision whose configuration to restore (swmgr's revision number, not a count of
        commits back).
    type: int
    required: true
'''

EXAMPLES = r'''
- name: Back to how the switch was before the change
  swmgr.switch.swmgr_rollback:
    revision: "{{ before.revision }}"
'''

RETURN = r'''
revision:
  description: The revision the rollback made, or the running one when nothing changed.
  returned: always
  type: int
changes:
  description: What the rollback changed (or would, in check mode).
  returned: always
  type: list
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.swmgr.switch.plugins.module_utils.swmgr import Client, SwmgrError, connection_argspec
from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import fail, finish


def main():
    spec = connection_argspec()
    spec.update(revision=dict(type='int', required=True))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    try:
        client = Client.from_params(module.params)
        body = {'Revision': module.params['revision']}
        _, dry, _ = client.request('POST', '/action/Rollback?dry_run=true', body)
        changes = dry.get('Changes') or []
        if not changes:
            module.exit_json(changed=False, revision=client.running_revision(), changes=[])
        rev = client.running_revision()
        if not module.check_mode:
            _, out, hdrs = client.request('POST', '/action/Rollback', body)
            rev = out.get('Revision') or int(hdrs.get('etag', '"0"').strip('"'))
    except SwmgrError as e:
        fail(module, e)
    finish(module, dict(changed=True, revision=rev, changes=changes))


if __name__ == '__main__':
    main()
