# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_tacacs_global
short_description: "Manage swmgr TacacsGlobal objects"
description:
  - "Whether logins are checked against the Tacacs servers (TACACS+, RFC 8907), and how long a server may take. Enable is the string \"true\" or \"false\", as FlexSwitch had it."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of TacacsGlobal: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The settings of the one TacacsGlobal."
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
      enable:
        description:
          - "API field C(Enable)."
          - "\"true\": logins are checked against the Tacacs servers (AAAGlobal's AuthOrder says where they come in the order)."
          - "swmgr's default: C(\"false\")."
        type: str
        choices:
          - "true"
          - "false"
      timeout:
        description:
          - "API field C(Timeout)."
          - "seconds a server may take to connect and answer before the next one is tried."
          - "swmgr's default: C(10)."
          - "From 1 to 60."
        type: int
'''

EXAMPLES = r'''
- name: "Make TacacsGlobal as given"
  swmgr.switch.swmgr_tacacs_global:
    state: merged
    config:
      profile_name: "default"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("TacacsGlobal")


if __name__ == '__main__':
    main()
