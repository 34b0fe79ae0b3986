// The translation unit that precompiles the runtime headers for the generated programs.
