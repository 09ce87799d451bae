mod codex;
