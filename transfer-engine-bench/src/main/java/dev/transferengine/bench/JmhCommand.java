package dev.transferengine.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import org.openjdk.jmh.Main;
import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

/**
 * {@code te-bench jmh <JMH arguments>}: hands every argument to JMH's own command line, e.g.
 * {@code te-bench jmh SubmitPathBenchmark -prof gc}; {@code te-bench jmh -h} lists JMH's options.
 */
@Command(name = "jmh", description = "Run the JMH suites in this jar; all arguments go to JMH (try: jmh -l, jmh -h).")
public final class JmhCommand implements Callable<Integer> {

    @Unmatched
    List<String> args = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        Main.main(args.toArray(String[]::new));
        return 0;
    }
}
