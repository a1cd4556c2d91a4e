export const COMMANDS = {};
