#!/usr/bin/env node
// Idle threads held by the reference client (@ag-ui/client 1.0.0): the
// counterpart of BenchmarkIdleThreads in the root package (issue 18).
//
// Usage (from the repository root):
//   (cd benchmarks/reference && npm install --no-package-lock)
//   AGUISTATE_IDLE_THREADS=/tmp/idle.jsonl go test -run '^$' -bench IdleThreads .
//   node --expose-gc benchmarks/reference/idle.mjs /tmp/idle.jsonl
//
// The file holds one thread a line: the JSON array of the events of one run.
// Each thread is an agent whose run streams its events through
// AbstractAgent.runAgent, as an application runs one: the client's
// middleware chain, its event checks and chunk transformation, then
// defaultApplyEvents. The agents are kept, and the script prints the heap
// (V8 heapUsed) they hold after garbage collection, per thread and per
// byte of their JSON text (state and messages, compact), as its last line:
// "HEAP_PER_THREAD HEAP_PER_TEXT_BYTE".

import fs from "node:fs";
import readline from "node:readline";
import { AbstractAgent } from "@ag-ui/client";
import { from } from "rxjs";

if (typeof globalThis.gc !== "function") {
  console.error("run with node --expose-gc");
  process.exit(2);
}

// An agent whose run streams the events it was given, once.
class ScriptedAgent extends AbstractAgent {
  constructor(config, events) {
    super(config);
    this.scripted = events;
  }
  run() {
    const events = this.scripted;
    this.scripted = undefined; // the agent keeps what the run made, not its events
    return from(events);
  }
}

function heapUsed() {
  for (let i = 0; i < 4; i++) globalThis.gc();
  return process.memoryUsage().heapUsed;
}

const file = process.argv[2];
if (!file) {
  console.error("usage: node --expose-gc idle.mjs THREADS.jsonl");
  process.exit(2);
}

const before = heapUsed();
const agents = [];
const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
for await (const line of lines) {
  if (line === "") continue;
  const events = JSON.parse(line);
  const started = events[0];
  const agent = new ScriptedAgent({ threadId: started.threadId }, events);
  await agent.runAgent({ runId: started.runId });
  agents.push(agent);
}
const after = heapUsed();
if (agents.length === 0) {
  console.error(`${file} holds no thread`);
  process.exit(1);
}

let text = 0;
for (const a of agents) {
  text += Buffer.byteLength(JSON.stringify(a.state)) + Buffer.byteLength(JSON.stringify(a.messages));
}
const held = after - before;
const perThread = held / agents.length;
console.error(
  `@ag-ui/client: ${agents.length} threads, ${(text / agents.length).toFixed(0)} B of JSON text each, ` +
    `${perThread.toFixed(0)} B of heap each (${(held / text).toFixed(2)} per byte of text)`,
);
console.log(`${perThread.toFixed(0)} ${(held / text).toFixed(3)}`);
