// Drives `osprey exec` through the published Codex TypeScript SDK, unchanged.
// Env: OSPREY_SDK_ENTRY (path to the SDK's dist/index.js), OSPREY_BIN, WORKDIR, PROMPT.
// Prints one JSON object: the thread id, the turn's items, final response and usage.
const { Codex } = await import(process.env.OSPREY_SDK_ENTRY);
const codex = new Codex({ codexPathOverride: process.env.OSPREY_BIN });
const thread = codex.startThread({
  workingDirectory: process.env.WORKDIR,
  skipGitRepoCheck: true,
});
const turn = await thread.run(process.env.PROMPT);
// Continue the same thread in a new `exec … resume <id>` process.
const resumed = codex.resumeThread(thread.id, {
  workingDirectory: process.env.WORKDIR,
  skipGitRepoCheck: true,
});
const second = await resumed.run("and now?");
console.log(JSON.stringify({
  threadId: thread.id,
  items: turn.items,
  finalResponse: turn.finalResponse,
  usage: turn.usage,
  resumedThreadId: resumed.id,
  resumedResponse: second.finalResponse,
}));
