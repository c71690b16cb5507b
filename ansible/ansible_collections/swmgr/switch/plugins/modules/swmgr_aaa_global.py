# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_aaa_global
short_description: "Manage swmgr AAAGlobal objects"
description:
  - "The order of login methods and accounting. A login is checked by the first method of AuthOrder that has a server configured (Tacacs only when TacacsGlobal Enable is \"true\"); a server's answer, yes or no, is final. The next method is tried only when no server of one answers, and the switch's local users only when no server of any method answered (logged at warning)."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of AAAGlobal: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The settings of the one AAAGlobal."
    type: dict
    suboptions:
      profile_name:
        description:
          - "API field C(ProfileName)."
          - "Key: identifies the object."
          - "swmgr's default: C(\"default\")."
        type: str
        choices:
          - "default"
      auth_order:
        description:
          - "API field C(AuthOrder)."
          - "remote methods in the order they are tried: tacacs+, radius; local users always come last."
          - "swmgr's default: C([\"tacacs+\",\"radius\"])."
        type: list
        elements: str
      accounting:
        description:
          - "API field C(Accounting)."
          - "send an accounting record of every commit and CLI command to the servers of AuthOrder."
          - "swmgr's default: C(true)."
        type: bool
      cache_seconds:
        description:
          - "API field C(CacheSeconds)."
          - "how long a remote login is trusted before the server is asked again; 0: every request; any change of the AAA configuration forgets them at once."
          - "swmgr's default: C(30)."
          - "From 0 to 300."
        type: int
'''

EXAMPLES = r'''
- name: "Make AAAGlobal as given"
  swmgr.switch.swmgr_aaa_global:
    state: merged
    config:
      profile_name: "default"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("AAAGlobal")


if __name__ == '__main__':
    main()
