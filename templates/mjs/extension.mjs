// Extension: __EXTENSION_NAME__
// __EXTENSION_DESCRIPTION__

import { joinSession } from "@github/copilot-sdk/extension";

const session = await joinSession({
    tools: [
        {
            name: "__TOOL_PREFIX___example",
            description: "Example tool - replace with your implementation",
            parameters: { type: "object", properties: {} },
            // Set skipPermission: true if users should not be prompted before this tool runs
            // skipPermission: true,
            handler: async (args) => "Hello from __EXTENSION_NAME__!",
        },
    ],
});
