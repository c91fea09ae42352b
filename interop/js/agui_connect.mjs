// Reconnects to an AG-UI run with @ag-ui/client (the `connect` pattern: a
// fresh HttpAgent, as after a page reload, whose connect() posts to
// agentd's /connect route) and prints the messages the client assembled,
// as JSON. Usage: AGENTD_URL=… AGENT=echo THREAD_ID=… RUN_ID=… node agui_connect.mjs
import { HttpAgent } from '@ag-ui/client';

const { AGENTD_URL: base, AGENT: agent, THREAD_ID: threadId, RUN_ID: runId } = process.env;

class ConnectingAgent extends HttpAgent {
  connect(input) { return this.run(input); }
}

const a = new ConnectingAgent({ url: `${base}/ag-ui/agents/${agent}/connect`, threadId });
let finished;
await a.connectAgent({ runId }, { onRunFinishedEvent: ({ event }) => { finished = event; } });
if (finished?.outcome?.type !== 'success') throw new Error(`run finished with ${JSON.stringify(finished)}`);
console.log(JSON.stringify(a.messages.map((m) => ({ role: m.role, content: m.content ?? '' }))));
