// One Copilot SDK session against the real Copilot CLI, asking for the project's extensions:
// node copilot_sdk_session.mjs CLI BASE_URL PROJECT PROMPT. Prints {sessionId, answer} as JSON.
// Run from a folder whose node_modules holds @github/copilot-sdk (the tier's install).
import { CopilotClient, RuntimeConnection, approveAll } from "@github/copilot-sdk";

const [cli, baseUrl, project, prompt] = process.argv.slice(2);
const client = new CopilotClient({
  connection: RuntimeConnection.forStdio({ path: cli }),
  workingDirectory: project,
  useLoggedInUser: false,
});
await client.start();
try {
  const session = await client.createSession({
    model: "test-model",
    provider: { type: "openai", baseUrl, apiKey: process.env.COPILOT_PROVIDER_API_KEY },
    requestExtensions: true,
    onPermissionRequest: approveAll,
    workingDirectory: project,
  });
  const answer = await session.sendAndWait({ prompt }, 60000);
  console.log(JSON.stringify({ sessionId: session.sessionId, answer: answer?.data?.content ?? null }));
  await session.disconnect();
} finally {
  await client.stop();
}
