int broken(;
