#!/usr/bin/env node
// The reference client's cost of one STATE_DELTA, on the states and events
// of BenchmarkCost: each delta goes through @ag-ui/client's event pipeline
// as AbstractAgent.runAgent sets it up in a browser (enforceEvents,
// transformChunks, verifyEvents, then defaultApplyEvents), one at a time,
// timed from the event to the state mutation it makes.
//
// Usage, from the repository root:
//
//   (cd benchmarks/reference && npm install --no-package-lock)
//   go test -run TestWriteCostData -cost-data /tmp/costdata .
//   node benchmarks/reference/delta.mjs /tmp/costdata > reference.txt
//
// It prints one line per case in the format of `go test -bench`, so that
// benchstat and benchmarks/plot read it:
//
//   BenchmarkReferenceCost/ROW/SIZE   N   NS ns/op
//
// where NS is the median of N deltas. A case runs at least 5 deltas and at
// most 200, and stops adding deltas after -budget seconds (default 3).

import fs from "node:fs";
import path from "node:path";
import { AbstractAgent, defaultApplyEvents, enforceEvents, transformChunks, verifyEvents } from "@ag-ui/client";
import { Subject, EMPTY } from "rxjs";

class Agent extends AbstractAgent {
  run() {
    return EMPTY;
  }
}

// runCase returns the time of each delta of c, in nanoseconds.
async function runCase(c, budgetNs) {
  const agent = new Agent({ threadId: "t", initialState: c.state });
  const input = { threadId: "t", runId: "r", state: c.state, messages: [], tools: [], context: [], forwardedProps: {} };
  const events$ = new Subject();
  let resolveNext = null;
  let failure = null;
  defaultApplyEvents(input, events$.pipe(enforceEvents(), transformChunks(), verifyEvents()), agent, []).subscribe({
    next: (m) => {
      if (m.state !== undefined && resolveNext) {
        const r = resolveNext;
        resolveNext = null;
        r();
      }
    },
    error: (e) => {
      failure = e;
      if (resolveNext) resolveNext();
    },
  });
  events$.next({ type: "RUN_STARTED", threadId: "t", runId: "r" });
  const times = [];
  const start = process.hrtime.bigint();
  for (let i = 0; times.length < 200; i++) {
    const done = new Promise((resolve) => (resolveNext = resolve));
    const t0 = process.hrtime.bigint();
    events$.next(structuredClone(c.events[i % c.events.length]));
    await done;
    times.push(Number(process.hrtime.bigint() - t0));
    if (failure) throw failure;
    if (times.length >= 5 && Number(process.hrtime.bigint() - start) > budgetNs) break;
  }
  return times;
}

const args = process.argv.slice(2);
let budget = 3;
const dirs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "-budget") budget = Number(args[++i]);
  else dirs.push(args[i]);
}
if (dirs.length !== 1) {
  console.error("usage: node delta.mjs [-budget SECONDS] DIR (the -cost-data directory of TestWriteCostData)");
  process.exit(2);
}
const files = fs.readdirSync(dirs[0]).filter((f) => f.endsWith(".json")).sort();
console.log(`pkg: @ag-ui/client 1.0.0 on Node ${process.version}`);
for (const f of files) {
  const c = JSON.parse(fs.readFileSync(path.join(dirs[0], f), "utf8"));
  const times = await runCase(c, budget * 1e9);
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  console.log(`BenchmarkReferenceCost/${c.name} \t${times.length}\t${median} ns/op`);
}
