/** Polls until `check` passes (model effects may take up to 5 s), failing with its last error after `ms`. */
export async function eventually(check: () => Promise<void>, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
