package com.example.sneaky;

import io.github.performancehelpers.internal.Preconditions;


/** Uses a class of the non-exported package; compiling this on the module path must fail. */
public final class UsesInternal {

    private UsesInternal() {
    }

    /**
     * Entry point.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        System.out.println(Preconditions.requireFinitePositive("rate", 1.0));
    }
}
