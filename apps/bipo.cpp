// Placeholder until the command line lands (apps/ owns only the thin main).
int main() { return 0; }
