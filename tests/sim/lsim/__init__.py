"""lsim: a simulated Lustre server /proc + /sys tree for lharvestd tests.

Modules:
  versions  - per-version profiles: header style, counter tables, file layout
  formats   - exact text rendering (and parsing) of exports/<nid>/stats files
  nids      - LNet NID generation and formatting
  fsio      - atomic file writes and atomic directory removal
  engine    - the simulation: its state, the clock, integration, one step
  model     - its parts (servers, targets, exports, clients), counter arithmetic
  streams   - what each client or peer does on a target in a step
  events    - topology and events (mount, failover, clear, idle, return...)
  outputs   - ground truth, expected-once output, the event log
  scenario  - scenario JSON normalisation and generators for `tree` / `big`
"""
